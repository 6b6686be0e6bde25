/**
 * An order is (carrier, order_code): two carriers may hand out the same code. Every SQL that matches
 * one table's order rows with another's matches both columns.
 */

/** The join condition of two relations' rows of the same order. */
export function sameOrder(left: string, right: string): string {
  return `${left}.carrier = ${right}.carrier AND ${left}.order_code = ${right}.order_code`;
}

/**
 * The condition keeping the rows (of the relation in scope, or of `alias`) whose order is one of
 * `relation`'s. It names the codes alone first: DuckDB filters a stored table's scan by them and skips
 * the row groups whose range of codes holds none, which a condition on both columns does not.
 */
export function ofOrdersIn(relation: string, alias?: string): string {
  const column = (name: string) => (alias === undefined ? name : `${alias}.${name}`);
  return `${column('order_code')} IN (SELECT order_code FROM ${relation})
    AND (${column('carrier')}, ${column('order_code')}) IN (SELECT (carrier, order_code) FROM ${relation})`;
}
