import { sqlText } from './sql-literals.js';

/**
 * A spreadsheet opening a CSV reads a cell that starts with one of these as a formula (OWASP, CSV
 * injection): text from the carrier or a partner's file must not run as one.
 */
const FORMULA_STARTS: readonly string[] = ['=', '+', '-', '@', '\t', '\r'];

/** A negative number (`-5.0000`, a partner's credit): a spreadsheet reads it as the number it is, never a formula. */
const NEGATIVE_NUMBER = '^-[0-9]+([.][0-9]+)?$';
const NEGATIVE_NUMBER_TEXT = new RegExp(NEGATIVE_NUMBER);

/** The text as a CSV cell a spreadsheet shows as text: a `'` before a text that would start a formula. */
export function formulaSafeText(text: string): string {
  return FORMULA_STARTS.includes(text.charAt(0)) && !NEGATIVE_NUMBER_TEXT.test(text) ? `'${text}` : text;
}

/** The text a formula-safe cell stands for: without the `'` put before a text that would start a formula. */
export function unformulaSafeText(cell: string): string {
  return cell.startsWith("'") && formulaSafeText(cell.slice(1)) === cell ? cell.slice(1) : cell;
}

/**
 * The same rule in SQL, over a VARCHAR expression (null stays null). A list, not an IN list: DuckDB
 * plans an IN list of six values as a join, which gives the rows of an ordered query out of order.
 */
export function formulaSafeTextSql(expression: string): string {
  const starts = FORMULA_STARTS.map((c) => `ascii(${sqlText(c)})`).join(', ');
  return `CASE WHEN list_contains([${starts}], ascii(${expression})) AND NOT regexp_full_match(${expression}, ${sqlText(NEGATIVE_NUMBER)}) THEN '''' || ${expression} ELSE ${expression} END`;
}
