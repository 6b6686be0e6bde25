import { NULL_PARTITION } from './parquet-snapshot.js';
import { sqlName, sqlText } from './sql-literals.js';

/**
 * How the snapshot cuts each large table: by carrier and by the carrier month (Asia/Ho_Chi_Minh, the
 * carriers' time) of a column that is set once when the row is first written and never changes, so
 * that a row stays in its partition for good and a night touches the partitions of that night.
 * Tables not named here are small (reference codes, runs, quota counters, payouts, marks) and are one
 * file each; so are the views, computed over several tables and the time of the export.
 */
export interface PartitionSpec {
  /** The column whose month places a row, as the docs and the manifest name it. */
  readonly column: string;
  /** The table of the rows this table's rows belong to, when that row's column places them. */
  readonly parent?: string;
  /**
   * The rows of the table with their `month`: the table itself, or joined to the row it belongs to.
   * With `partitions`, a condition keeps the rows that may fall in them (a range of the placing
   * column, which lets DuckDB skip the row groups of other months); the caller keeps the exact ones.
   */
  readonly rows: (table: string, partitions?: readonly Partition[]) => string;
  /** The partitions (`carrier`, `month`) of the rows of `rows`, a relation with the table's columns. */
  readonly partitionsOf: (rows: string) => string;
  /**
   * The column a report selects a range of days by (an order's `order_date`, an attempt's
   * `attempted_at`): the manifest keeps each partition's least and greatest value of it, and a reader
   * given the range reads no file of a partition wholly outside it.
   */
  readonly spannedBy?: string;
}

/** One partition: a carrier and a carrier month, `YYYY-MM` (null for rows without one). */
export interface Partition {
  readonly carrier: string;
  readonly month: string | null;
}

/**
 * The carriers' time, Asia/Ho_Chi_Minh, is UTC+07:00 all year (no daylight saving since 1975): the
 * offset added to the UTC instant, without the time zone lookup that costs several times more per row.
 */
const CARRIER_OFFSET_MICROS = 7 * 3600 * 1_000_000;

/** The carrier month of `instant`, `YYYY-MM`; NULL for NULL. */
export function carrierMonthSql(instant: string): string {
  return `strftime(make_timestamp(epoch_us(${instant}) + ${CARRIER_OFFSET_MICROS}), '%Y-%m')`;
}

/** The folder of a partition under its table's, as the manifest keys it. */
export function partitionKey(partition: Partition): string {
  return `carrier=${partition.carrier}/month=${partition.month ?? NULL_PARTITION}`;
}

/** partitionKey in SQL, of the `carrier` and `month` columns of the relation in scope. */
export const PARTITION_KEY_SQL = `'carrier=' || carrier || '/month=' || coalesce(month, ${sqlText(NULL_PARTITION)})`;

/** `instant` within the carrier month `month` (`YYYY-MM`). */
function inMonthSql(instant: string, month: string): string {
  const [year, monthOfYear] = month.split('-').map(Number) as [number, number];
  const next = monthOfYear === 12 ? `${year + 1}-01` : `${year}-${String(monthOfYear + 1).padStart(2, '0')}`;
  return `(${instant} >= TIMESTAMPTZ '${month}-01 00:00:00+07' AND ${instant} < TIMESTAMPTZ '${next}-01 00:00:00+07')`;
}

/** The rows of `alias` whose `column` may place them in one of `partitions`. */
function mayFallIn(alias: string, column: string, partitions: readonly Partition[]): string {
  const instant = `${alias}.${sqlName(column)}`;
  const months = [...new Set(partitions.map((partition) => partition.month))];
  return months.map((month) => (month === null ? `${instant} IS NULL` : inMonthSql(instant, month))).join(' OR ');
}

/** Rows placed by a column of their own. */
function own(column: string, spannedBy?: string): PartitionSpec {
  const monthOf = carrierMonthSql(`t.${sqlName(column)}`);
  return {
    column,
    spannedBy,
    rows: (table, partitions) =>
      `SELECT t.*, ${monthOf} AS month FROM ${sqlName(table)} AS t${partitions === undefined ? '' : ` WHERE ${mayFallIn('t', column, partitions)}`}`,
    // A relation of rows to be written may hold the instant as the carrier's text.
    partitionsOf: (rows) =>
      `SELECT DISTINCT t.carrier, ${carrierMonthSql(`CAST(t.${sqlName(column)} AS TIMESTAMPTZ)`)} AS month FROM (${rows}) AS t`,
  };
}

/**
 * Rows placed by the column of the row they belong to in `parent`, joined on `keys`. The parent rows
 * are read through the last key alone first (the order code, the quote id), as ofOrdersIn does.
 */
function ofParent(parent: string, column: string, keys: readonly string[], spannedBy?: string): PartitionSpec {
  const on = keys.map((key) => `p.${sqlName(key)} = t.${sqlName(key)}`).join(' AND ');
  const last = sqlName(keys[keys.length - 1]!);
  const tuple = (alias: string) => `(${keys.map((key) => `${alias}.${sqlName(key)}`).join(', ')})`;
  const monthOf = carrierMonthSql(`p.${sqlName(column)}`);
  const parentsIn = (partitions: readonly Partition[]) => {
    // Rows without a month may have no parent at all: no range finds them.
    if (partitions.some((partition) => partition.month === null)) return '';
    const parents = `SELECT * FROM ${sqlName(parent)} AS p WHERE ${mayFallIn('p', column, partitions)}`;
    return ` WHERE t.${last} IN (SELECT ${last} FROM (${parents})) AND ${tuple('t')} IN (SELECT ${tuple('p')} FROM (${parents}) AS p)`;
  };
  return {
    column: `${parent}.${column}`,
    parent,
    spannedBy,
    rows: (table, partitions) =>
      `SELECT t.*, ${monthOf} AS month FROM ${sqlName(table)} AS t LEFT JOIN ${sqlName(parent)} AS p ON ${on}${partitions === undefined ? '' : parentsIn(partitions)}`,
    partitionsOf: (rows) =>
      `SELECT DISTINCT t.carrier, ${monthOf} AS month FROM (${rows}) AS t
       LEFT JOIN (SELECT * FROM ${sqlName(parent)} WHERE ${last} IN (SELECT ${last} FROM (${rows}))) AS p ON ${on}`,
  };
}

const ORDER_KEYS = ['carrier', 'order_code'];

export const PARTITIONED_TABLES: ReadonlyMap<string, PartitionSpec> = new Map([
  // An order's month is the month it was first seen: first_seen_at is kept by every later sighting.
  // The charges, reconcile and COD reports select orders, and audit rows, by order_date: a later accept date moves it.
  ['orders', own('first_seen_at', 'order_date')],
  ['order_charges', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  ['order_charge_audit', ofParent('orders', 'first_seen_at', ORDER_KEYS, 'order_date')],
  ['order_image_lists', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  ['order_images', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  // History and events: the month the event happened or was received.
  ['order_statuses', own('time')],
  ['order_trackings', own('date_change')],
  ['order_changes', own('seen_at')],
  ['delivery_failures', own('attempted_at', 'attempted_at')],
  ['callback_events', own('received_at')],
  // Lookups and quotes: the month they were made.
  ['lookup_results', own('finished_at')],
  ['price_quotes', own('quoted_at')],
  ['price_quote_lines', ofParent('price_quotes', 'quoted_at', ['carrier', 'quote_id'])],
  ['run_inputs', ofParent('runs', 'started_at', ['run_id'])],
]);
