import { CARRIER_UTC_OFFSET_MINUTES, nextCarrierDayStart } from '../carriers/carrier-time.js';
import { findCarrier } from '../carriers/known-carriers.js';
import type { SnapshotWindow } from '../warehouse/parquet-snapshot-reader.js';
import { sqlText, timestampLiteral } from '../warehouse/sql-literals.js';
import type { ReportTable } from './writers/report-writer.js';

/** The carrier-local wall time of a TIMESTAMPTZ column, whatever the connection's time zone. */
export function carrierLocalTime(column: string): string {
  return `make_timestamp(epoch_us(${column}) + ${CARRIER_UTC_OFFSET_MINUTES * 60_000_000})`;
}

/** The carrier-local date (UTC+07:00) of a TIMESTAMPTZ column. */
export function carrierDate(column: string): string {
  return `CAST(${carrierLocalTime(column)} AS DATE)`;
}

/** The ISO week (`2026-W47`) of a TIMESTAMPTZ column, in carrier-local time: one strftime costs less than printf of isoyear and week. */
export function carrierIsoWeek(column: string): string {
  return `strftime(${carrierLocalTime(column)}, '%G-W%V')`;
}

/** What a report covers: carrier-local days (inclusive) and one account; absent means no limit. */
export interface ReportScope {
  readonly fromDay?: string | undefined;
  readonly toDay?: string | undefined;
  readonly account?: string | undefined;
  /** One carrier's rows only (every table a report reads has a carrier column). */
  readonly carrier?: string | undefined;
  /**
   * The lowest and highest order code of the scope's orders, when known and when each of their carriers
   * hands out codes in rising order (risingOrderCodes, see codeRangeOf): then an order's rows in the
   * other tables lie close to those of its days, and a range of codes lets DuckDB skip the row groups
   * outside it, which a join on the codes alone does not.
   */
  readonly codes?: { readonly first: string; readonly last: string } | undefined;
  /** A further SQL condition on the rows: a part of a scope that a report computes on its own. */
  readonly condition?: string | undefined;
}

/**
 * The columns a scope limits orders by. order_date is the accept date, else the earliest status or
 * handling time, else when the warehouse first stored the order: an order the carrier never accepted
 * is in a range too. Orders and their audit rows store it, so a range is a filter on one column.
 */
export const ORDER_COLUMNS = { time: 'order_date', account: 'account_alias' } as const;

/** The condition keeping rows whose `column` lies in the scope's range of order codes (`true` when unknown). */
export function codeRangeCondition(scope: ReportScope, column = 'order_code'): string {
  return scope.codes === undefined
    ? 'true'
    : `${column} BETWEEN ${sqlText(scope.codes.first)} AND ${sqlText(scope.codes.last)}`;
}

/**
 * The range of codes of a scope from each carrier's lowest and highest code among its orders (rows of
 * carrier, first, last; a null carrier for codes of no carrier's, such as a partner's): undefined when
 * there are none, or when a carrier among them does not hand out its codes in rising order, as a range
 * of its codes would then say nothing of where its orders' rows lie.
 */
export function codeRangeOf(rows: readonly Record<string, unknown>[]): ReportScope['codes'] {
  const ranges = rows.filter((row) => typeof row.first === 'string' && typeof row.last === 'string');
  if (ranges.length === 0) return undefined;
  const rising = ranges.every(
    (row) => row.carrier === null || findCarrier(String(row.carrier))?.risingOrderCodes === true,
  );
  if (!rising) return undefined;
  const firsts = ranges.map((row) => String(row.first)).sort();
  const lasts = ranges.map((row) => String(row.last)).sort();
  return { first: firsts[0]!, last: lasts[lasts.length - 1]! };
}

/** The first instant of a carrier day (YYYY-MM-DD), epoch ms. */
function carrierDayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) - CARRIER_UTC_OFFSET_MINUTES * 60_000;
}

/** The instants a scope's days run between: the first day's start, the end of the last (exclusive). */
export function scopeWindow(scope: Pick<ReportScope, 'fromDay' | 'toDay'>): SnapshotWindow {
  return {
    start: scope.fromDay === undefined ? undefined : carrierDayStart(scope.fromDay),
    end: scope.toDay === undefined ? undefined : nextCarrierDayStart(carrierDayStart(scope.toDay)),
  };
}

/**
 * SQL conditions (joined with AND, `true` when none) keeping the rows of a scope. The days compare the
 * time column itself with the instants they start and end at, which DuckDB checks against each row
 * group's minimum and maximum and skips the groups outside the range.
 */
export function scopeCondition(
  scope: ReportScope,
  columns: { readonly time: string; readonly account: string },
): string {
  const conditions: string[] = [];
  const { start, end } = scopeWindow(scope);
  if (start !== undefined) conditions.push(`${columns.time} >= ${timestampLiteral(start)}`);
  if (end !== undefined) conditions.push(`${columns.time} < ${timestampLiteral(end)}`);
  if (scope.account !== undefined) conditions.push(`${columns.account} = ${sqlText(scope.account)}`);
  if (scope.carrier !== undefined) conditions.push(`carrier = ${sqlText(scope.carrier)}`);
  if (scope.condition !== undefined) conditions.push(`(${scope.condition})`);
  return conditions.length === 0 ? 'true' : conditions.join(' AND ');
}

/** A relation that is a scope's rows of another: `(SELECT * FROM relation WHERE ...)`. */
export function scoped(
  relation: string,
  scope: ReportScope,
  columns: { readonly time: string; readonly account: string },
): string {
  const condition = scopeCondition(scope, columns);
  return condition === 'true' ? relation : `(SELECT * FROM ${relation} WHERE ${condition})`;
}

/**
 * A money expression times a share (decimal text such as `0.2`), rounded to DECIMAL(20,4). Where the
 * amount is small enough for the product to fit 18 digits, DuckDB multiplies and rounds it in 64 bits;
 * rounding the 128-bit product of a DECIMAL(20,4) costs far more. The same value either way. When
 * every amount is known to be below `bound` and that is small enough, the product is DECIMAL(18,4).
 */
export function moneyTimesShare(amount: string, share: string, bound = Number.POSITIVE_INFINITY): string {
  const [whole = '', fraction = ''] = share.split('.');
  const shareWidth = Math.max(1, whole.replace(/^0+/, '').length) + fraction.length;
  const literal = `CAST(${share} AS DECIMAL(${shareWidth},${fraction.length}))`;
  const amountWidth = 18 - shareWidth;
  const narrow = `CAST(CAST(${amount} AS DECIMAL(${amountWidth},4)) * ${literal} AS DECIMAL(18,4))`;
  if (bound <= 10 ** (amountWidth - 4)) return narrow;
  return `CASE WHEN abs(${amount}) < 1${'0'.repeat(amountWidth - 4)} THEN ${narrow}
               ELSE CAST(${amount} * ${literal} AS DECIMAL(20,4)) END`;
}

/** A temporary table a report run fills once and then reads several times. */
export function temporaryTable(name: string, query: string): string {
  return `CREATE OR REPLACE TEMP TABLE ${name} AS ${query}`;
}

/** What a report run writes: statements to run first (temporary tables), then one file per table. */
export interface ReportTables {
  readonly prepare: readonly string[];
  /** The temporary tables' rows may come in any order: DuckDB then fills them on every thread. */
  readonly prepareInAnyOrder?: boolean;
  readonly tables: readonly ReportTable[];
}

/** The table of a report run by its name (its file's name): a report has no table by position. */
export function reportTable(report: ReportTables, name: string): ReportTable {
  const table = report.tables.find((t) => t.name === name);
  if (table === undefined)
    throw new Error(`no report table ${name}; the tables are ${report.tables.map((t) => t.name).join(', ')}`);
  return table;
}
