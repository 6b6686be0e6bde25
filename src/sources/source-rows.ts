import { SourceError, type SourceItem } from './order-code-source.js';

/** Where a source's order code, account and carrier are among its columns (indexes into a row). */
export interface SourceColumns {
  readonly orderCode: number;
  readonly account: number | null;
  readonly carrier: number | null;
}

/** A row of a query result: the result's column names, the row's values, and where it is. */
export interface QueryRow {
  readonly columnNames: readonly string[];
  readonly values: readonly unknown[];
  readonly origin: string;
  /** Its number in its source: the file's line (a sheet's row) it ends on, or the query's row. */
  readonly line: number;
}

const ORDER_CODE_NAMES = new Set(['order_code', 'ordercode']);
const ACCOUNT_NAME = 'account';
const CARRIER_NAME = 'carrier';
const LISTED_NAMES = 20;
const TEXT_CHARACTERS = 200;

/**
 * Finds the order code column (`order_code` or `ordercode`) and the optional `account` and `carrier`
 * columns by name, ignoring case and surrounding blanks; the first of duplicates wins. Null when there
 * is no order code.
 */
export function findSourceColumns(names: readonly string[]): SourceColumns | null {
  const normalized = names.map((name) => name.trim().toLowerCase());
  const orderCode = normalized.findIndex((name) => ORDER_CODE_NAMES.has(name));
  if (orderCode < 0) return null;
  const optional = (name: string) => {
    const index = normalized.indexOf(name);
    return index < 0 ? null : index;
  };
  return { orderCode, account: optional(ACCOUNT_NAME), carrier: optional(CARRIER_NAME) };
}

/** A column's value as a source row gives it: trimmed text, null when empty. */
function optionalText(value: unknown): string | null {
  const text = value === null || value === undefined ? '' : String(value).trim();
  return text === '' ? null : text;
}

/** The order code, account and carrier columns of `sourceName`'s columns; a SourceError naming them when it has no order code. */
export function requiredSourceColumns(sourceName: string, names: readonly string[]): SourceColumns {
  const columns = findSourceColumns(names);
  if (columns === null)
    throw new SourceError(`${sourceName} has no order_code column; its columns are ${listColumnNames(names)}`);
  return columns;
}

/** The column names for a message: quoted, comma separated, the first 20 of them. */
export function listColumnNames(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const listed = names
    .slice(0, LISTED_NAMES)
    .map((name) => JSON.stringify(name))
    .join(', ');
  return names.length > LISTED_NAMES ? `${listed} and ${names.length - LISTED_NAMES} more` : listed;
}

/** A row's text as a rejection shows it: its first 200 characters, never half a surrogate pair. */
export function rejectionText(text: string): string {
  if (text.length <= TEXT_CHARACTERS) return text;
  return Array.from(text).slice(0, TEXT_CHARACTERS).join('');
}

/**
 * The item for one database row from its values: text is trimmed, other values go through String()
 * (a number, a DECIMAL, a UUID...), an empty account or carrier is null.
 */
export function itemFromValues(values: readonly unknown[], columns: SourceColumns, origin: string): SourceItem {
  const orderCode = values[columns.orderCode];
  if (orderCode === null || orderCode === undefined) {
    return { kind: 'rejected', rejection: { origin, reason: 'order_code is null', text: null } };
  }
  const code = String(orderCode).trim();
  if (code === '') return { kind: 'rejected', rejection: { origin, reason: 'order_code is empty', text: null } };
  const account = columns.account === null ? null : optionalText(values[columns.account]);
  const carrier = columns.carrier === null ? {} : { carrier: optionalText(values[columns.carrier]) };
  return { kind: 'code', code: { orderCode: code, account, ...carrier, origin } };
}

/**
 * The order codes of a query's rows: `rows` reads them, showing the column names to the check it is
 * given before any row; a result without an order code column is a SourceError naming `queryName`'s columns.
 */
export async function* orderCodeItems(
  queryName: string,
  rows: (checkColumns: (names: readonly string[]) => void) => AsyncIterable<QueryRow>,
): AsyncGenerator<SourceItem> {
  let columns: SourceColumns = { orderCode: 0, account: null, carrier: null };
  for await (const { values, origin } of rows((names) => (columns = requiredSourceColumns(queryName, names))))
    yield itemFromValues(values, columns, origin);
}
