import { sqlName } from './sql-literals.js';

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
  /** The rows of the table with their `month`: the table itself, or joined to the row it belongs to. */
  readonly rows: (table: string) => string;
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

/** Rows placed by a column of their own. */
function own(column: string): PartitionSpec {
  return {
    column,
    rows: (table) => `SELECT t.*, ${carrierMonthSql(`t.${sqlName(column)}`)} AS month FROM ${sqlName(table)} AS t`,
  };
}

/** Rows placed by the column of the row they belong to in `parent`, joined on `keys`. */
function ofParent(parent: string, column: string, keys: readonly string[]): PartitionSpec {
  const on = keys.map((key) => `p.${sqlName(key)} = t.${sqlName(key)}`).join(' AND ');
  return {
    column: `${parent}.${column}`,
    rows: (table) =>
      `SELECT t.*, ${carrierMonthSql(`p.${sqlName(column)}`)} AS month FROM ${sqlName(table)} AS t LEFT JOIN ${sqlName(parent)} AS p ON ${on}`,
  };
}

const ORDER_KEYS = ['carrier', 'order_code'];

export const PARTITIONED_TABLES: ReadonlyMap<string, PartitionSpec> = new Map([
  // An order's month is the month it was first seen: first_seen_at is kept by every later sighting.
  ['orders', own('first_seen_at')],
  ['order_charges', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  ['order_charge_audit', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  ['order_image_lists', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  ['order_images', ofParent('orders', 'first_seen_at', ORDER_KEYS)],
  // History and events: the month the event happened or was received.
  ['order_statuses', own('time')],
  ['order_trackings', own('date_change')],
  ['order_changes', own('seen_at')],
  ['delivery_failures', own('attempted_at')],
  ['callback_events', own('received_at')],
  // Lookups and quotes: the month they were made.
  ['lookup_results', own('finished_at')],
  ['price_quotes', own('quoted_at')],
  ['price_quote_lines', ofParent('price_quotes', 'quoted_at', ['carrier', 'quote_id'])],
  ['run_inputs', ofParent('runs', 'started_at', ['run_id'])],
]);
