import { farRegionLineIn, neutralStatusIn } from '../carriers/carrier-definition-sql.js';
import { ofOrdersIn, sameOrder } from './order-keys.js';
import { recordChangedRows, recordWholeTableChanged } from './partition-change-ledger.js';
import type { SqlParameters, SqlRunner } from './warehouse.js';

/** The table of per-order audit rows (schema v1-baseline.ts). */
export const CHARGE_AUDIT_TABLE = 'order_charge_audit';

const MONEY = 'DECIMAL(20,4)';

/**
 * Money text without the DECIMAL's zero fraction: `1184800.0000` -> `1184800`, `12.5000` stays. Works
 * in DECIMAL(18,4), held in 64 bits, which DuckDB converts faster than the 128-bit DECIMAL(20,4).
 */
function moneyText(column: string): string {
  const small = `CAST(${column} AS DECIMAL(18,4))`;
  return `CASE WHEN ${small} = trunc(${small}) THEN CAST(CAST(${small} AS BIGINT) AS VARCHAR) ELSE CAST(${small} AS VARCHAR) END`;
}

/** Relations of order_charges and order_statuses rows, for orders whose rows a writer holds. */
export interface AuditHistory {
  readonly charges: string;
  readonly statuses: string;
}

/** The rows a writer has just stored for its orders: their history, and the orders' own rows. */
export interface StoredRows extends AuditHistory {
  readonly orders: string;
}

/** The amounts of an order's own row that its audit row keeps. */
export const AUDITED_ORDER_AMOUNTS = [
  'price',
  'price_fr',
  'far_region_fee_amount',
  'fuel_fee_amount',
  'vat_amount',
  'cod_amount',
  'total_service_cost',
] as const;

/** The columns of an order's own row that its audit row keeps: all a charges report reads of it. */
const AUDITED_ORDER_COLUMNS = [
  'account_alias',
  'accept_date',
  'order_date',
  'status',
  'status_name',
  'service_type_id',
  ...AUDITED_ORDER_AMOUNTS,
  'length',
  'width',
  'height',
  'real_weight',
  'cal_weight',
  'weight',
];

/**
 * The audit row of every order in `orders` (a relation of orders' rows) whose rows in the other tables
 * match `condition` (a condition on `carrier` and `order_code`, `true` for all): the order's columns a charges
 * report reads, and what the charge checks read from the order's charge lines, status history,
 * latest successful price quote and changes after delivery.
 * The checks themselves depend on a report's rules and invoices, so they are computed from these rows
 * when the report runs. `history` gives relations to read in place of order_charges and
 * order_statuses: rows a writer has in hand, the same as it stores, which cost less than reading
 * the stored tables back.
 */
export function chargeAuditQuery(orders = 'orders', condition = 'true', history?: AuditHistory): string {
  const where = (conditions: string[], ofOrders = condition) => `WHERE ${[ofOrders, ...conditions].join(' AND ')}`;
  // Rows a writer has in hand are its orders' already: `condition` would only filter them again.
  const ofHistory = (conditions: string[]) => where(conditions, history === undefined ? condition : 'true');
  return `
    WITH lines AS (
      SELECT carrier, order_code, CAST(sum(cost) AS ${MONEY}) AS lines_total,
             CAST(coalesce(sum(cost) FILTER (WHERE ${farRegionLineIn()}), 0) AS ${MONEY}) AS far_region_line_cost,
             -- An unordered list sorted per order: an ordered string_agg sorts far slower.
             array_to_string(list_transform(list_sort(list({line_no: line_no, text: service_id || '=' || ${moneyText('cost')}})), line -> line.text), '; ') AS price_info
      FROM ${history?.charges ?? 'order_charges'} ${ofHistory([])} GROUP BY carrier, order_code
    ),
    history AS (
      SELECT carrier, order_code,
             bool_or(${neutralStatusIn(['returning', 'returned'])}) AS returned,
             bool_or(${neutralStatusIn(['cancelled'])}) AS cancelled,
             max("time") FILTER (WHERE ${neutralStatusIn(['delivered'])}) AS delivered_at
      -- Only the statuses the checks look at: an order without any has no row, which reads the same.
      FROM ${history?.statuses ?? 'order_statuses'} ${ofHistory([neutralStatusIn(['returning', 'returned', 'cancelled', 'delivered'])])}
      GROUP BY carrier, order_code
    ),
    quotes AS (
      SELECT carrier, order_code, total_service_cost AS quote_total, quote_id
      FROM price_quotes ${where(['ok', 'order_code IS NOT NULL'])}
      QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY quoted_at DESC, quote_id DESC) = 1
    ),
    rebills AS (
      SELECT c.carrier, c.order_code, arg_min(TRY_CAST(c.old_value AS ${MONEY}), c.seen_at) AS total_at_delivery,
             min(c.seen_at) AS changed_at
      FROM (SELECT * FROM order_changes ${where(["field = 'total_service_cost'"])}) AS c
      JOIN history AS h ON ${sameOrder('h', 'c')}
      WHERE c.seen_at > h.delivered_at
      GROUP BY c.carrier, c.order_code
    )
    SELECT o.carrier, o.order_code, ${AUDITED_ORDER_COLUMNS.map((c) => `o.${c}`).join(', ')}, l.price_info, CAST(coalesce(l.lines_total, 0) AS ${MONEY}) AS lines_total,
           CAST(coalesce(l.far_region_line_cost, 0) AS ${MONEY}) AS far_region_line_cost,
           coalesce(h.returned, false) AS returned_in_history, coalesce(h.cancelled, false) AS cancelled_in_history,
           h.delivered_at, q.quote_id, q.quote_total, r.total_at_delivery, r.changed_at AS total_changed_at
    FROM ${orders} AS o
    LEFT JOIN lines AS l ON ${sameOrder('l', 'o')}
    LEFT JOIN history AS h ON ${sameOrder('h', 'o')}
    LEFT JOIN quotes AS q ON ${sameOrder('q', 'o')}
    LEFT JOIN rebills AS r ON ${sameOrder('r', 'o')}`;
}

/**
 * Recomputes the audit rows of the orders `codes` selects (a query of carrier and order_code): the
 * writers of an audit's inputs call it in their transaction for the orders they changed, so the
 * audit rows always match the rows they come from. `codes` undefined recomputes every order's.
 */
export async function refreshChargeAudit(sql: SqlRunner, codes?: string, parameters?: SqlParameters): Promise<void> {
  if (codes === undefined) {
    await sql.run(`DELETE FROM ${CHARGE_AUDIT_TABLE}`);
    await sql.run(chargeAuditInsert());
    await recordWholeTableChanged(sql, CHARGE_AUDIT_TABLE);
    return;
  }
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE charge_audit_codes AS SELECT DISTINCT carrier, order_code FROM (${codes})`,
    parameters,
  );
  await refreshChargeAuditOf(sql, 'charge_audit_codes', true);
  // An audit row's partition is its order's, which its order keeps.
  await recordChangedRows(sql, CHARGE_AUDIT_TABLE, 'SELECT carrier, order_code FROM charge_audit_codes');
  await sql.run('DROP TABLE charge_audit_codes');
}

/**
 * Recomputes the audit rows of the orders in `table` (each carrier and order_code once). Without `anyStored`, the
 * caller knows none of them had an order row before, so none had an audit row to delete. `stored`:
 * those orders' rows, charge lines and statuses, as the caller has just stored them. The caller
 * records the partitions, which are the orders' own (with theirs, as a child of `orders`).
 */
export async function refreshChargeAuditOf(
  sql: SqlRunner,
  table: string,
  anyStored: boolean,
  stored?: StoredRows,
): Promise<void> {
  const ofCodes = ofOrdersIn(table);
  if (anyStored) await sql.run(`DELETE FROM ${CHARGE_AUDIT_TABLE} WHERE ${ofCodes}`);
  await sql.run(chargeAuditInsert(stored?.orders ?? `(SELECT * FROM orders WHERE ${ofCodes})`, ofCodes, stored));
}

/**
 * The statement inserting chargeAuditQuery's rows, in carrier and code order as the orders' other rows
 * lie, so a report's range of codes skips the rest.
 */
export function chargeAuditInsert(orders = 'orders', condition = 'true', history?: AuditHistory): string {
  return `INSERT INTO ${CHARGE_AUDIT_TABLE} BY NAME ${chargeAuditQuery(orders, condition, history)} ORDER BY o.carrier, o.order_code`;
}
