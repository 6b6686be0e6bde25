import { failedAttemptStatusIn } from '../carriers/carrier-definition-sql.js';
import { ofOrdersIn, sameOrder } from '../warehouse/order-keys.js';
import { sqlText } from '../warehouse/sql-literals.js';
import {
  carrierDate,
  carrierIsoWeek,
  codeRangeCondition,
  type ReportScope,
  type ReportTables,
  scopeCondition,
  scoped,
  temporaryTable,
} from './report-sql.js';

/** The join condition of a delay reason (`reasons`) with the code `code` of the carrier of `row`. */
function sameReason(reasons: string, code: string, row: string): string {
  return `${reasons}.carrier = ${row}.carrier AND ${reasons}.code = ${code}`;
}

/** Meaning shown for an attempt whose reason no snapshot or callback brought. */
export const UNKNOWN_REASON = 'reason not observed';

/** An attempt's columns that do not need its order: the reason's meaning, its carrier-local day and ISO week. */
function attemptColumns(attempt: string): string {
  return `${attempt}.carrier, ${attempt}.order_code, ${attempt}.attempted_at, ${carrierDate(`${attempt}.attempted_at`)} AS attempted_day,
           ${carrierIsoWeek(`${attempt}.attempted_at`)} AS iso_week, ${attempt}.delay_code,
           coalesce(d.meaning, CASE WHEN ${attempt}.delay_code IS NULL THEN '${UNKNOWN_REASON}' END) AS delay_meaning,
           ${attempt}.delay_note, ${attempt}.province_name, ${attempt}.post_office_name, ${attempt}.source, ${attempt}.observed_at`;
}

/**
 * One row per failed delivery attempt (`delivery_failures`, from tracking snapshots and callbacks, or
 * `attempts`, a relation of its rows holding every attempt of each of its orders), with its order's
 * account and status now, the reason's meaning, its carrier-local day and ISO week, and its number
 * among the order's attempts.
 */
export function failuresQuery(attempts = 'delivery_failures'): string {
  // Numbered before the join with the orders, so the numbering sorts the attempts' rows alone.
  return `
    SELECT f.carrier, f.order_code, o.account_alias, f.attempted_at, f.attempted_day, f.iso_week, f.attempt_no,
           f.delay_code, f.delay_meaning, f.delay_note, f.province_name, f.post_office_name, f.source, f.observed_at,
           o.status AS status_now
    FROM (
      SELECT ${attemptColumns('a')}, row_number() OVER (PARTITION BY a.carrier, a.order_code ORDER BY a.attempted_at) AS attempt_no
      FROM ${attempts} AS a
      LEFT JOIN delay_reasons AS d ON ${sameReason('d', 'a.delay_code', 'a')}
    ) AS f
    LEFT JOIN orders AS o ON ${sameOrder('o', 'f')}`;
}

/** The columns a scope limits attempts by: the attempt's time, its order's account. */
export const ATTEMPT_COLUMNS = { time: 'attempted_at', account: 'account_alias' } as const;

/** The condition keeping the attempts of a scope's days (and of its part's condition); `true` when none. */
function attemptDays(scope: ReportScope): string {
  return scopeCondition(
    { fromDay: scope.fromDay, toDay: scope.toDay, carrier: scope.carrier, condition: scope.condition },
    ATTEMPT_COLUMNS,
  );
}

/**
 * The attempts of a scope (days of the attempt, the order's account), numbered among all of their
 * order's attempts: only the orders with an attempt in the days are numbered, which reads the days'
 * row groups, not the whole history.
 */
export function scopedFailuresQuery(scope: ReportScope): string {
  const days = attemptDays(scope);
  const attempts =
    days === 'true'
      ? 'delivery_failures'
      : `(SELECT * FROM delivery_failures
         WHERE ${codeRangeCondition(scope)} AND ${ofOrdersIn(`(SELECT carrier, order_code FROM delivery_failures WHERE ${days})`)})`;
  return `SELECT * FROM ${scoped(`(${failuresQuery(attempts)})`, scope, ATTEMPT_COLUMNS)}`;
}

/**
 * The attempts of a scope with the columns the breakdowns and repeated failures read, without their
 * number or their order's status: read from the warehouse's compressed rows with no window and no join
 * with every order, each time a table needs them.
 */
export function scopedAttemptsQuery(scope: ReportScope): string {
  const days = attemptDays(scope);
  const account =
    scope.account === undefined
      ? ''
      : ` AND ${ofOrdersIn(`(SELECT carrier, order_code FROM orders WHERE account_alias = ${sqlText(scope.account)})`)}`;
  return `
    SELECT ${attemptColumns('a')}
    FROM (SELECT * FROM delivery_failures WHERE ${codeRangeCondition(scope)} AND ${days}${account}) AS a
    LEFT JOIN delay_reasons AS d ON ${sameReason('d', 'a.delay_code', 'a')}`;
}

/** Counts and shares of the failures of a relation of attempts (failuresQuery or scopedAttemptsQuery rows), grouped by `keys`. */
function breakdown(failures: string, keys: readonly string[], order: string): string {
  const group = keys.join(', ');
  return `
    SELECT ${group}, count(*) AS failures, count(DISTINCT order_code) AS orders,
           round(count(*) / sum(count(*)) OVER (), 4) AS share
    FROM ${failures}
    GROUP BY ${group}
    ORDER BY ${order}`;
}

export function failuresByReasonQuery(failures: string): string {
  return breakdown(failures, ['delay_code', 'delay_meaning'], 'failures DESC, delay_code NULLS LAST');
}

export function failuresByProvinceQuery(failures: string): string {
  return breakdown(failures, ['province_name'], 'failures DESC, province_name');
}

export function failuresByPostOfficeQuery(failures: string): string {
  return breakdown(failures, ['province_name', 'post_office_name'], 'failures DESC, province_name, post_office_name');
}

export function failuresByWeekQuery(failures: string): string {
  return breakdown(failures, ['iso_week'], 'iso_week');
}

/** Per ISO week and reason: how the reasons move over time (its week totals are failuresByWeekQuery's). */
export function failuresByWeekAndReasonQuery(failures: string): string {
  return breakdown(
    failures,
    ['iso_week', 'delay_code', 'delay_meaning'],
    'iso_week, failures DESC, delay_code NULLS LAST',
  );
}

/**
 * Per order with two or more failed attempts among `attempts` (rows with order_code, attempted_at and
 * delay_code): how many, the first and the last, and its reasons in order.
 */
function repeatedAttemptsQuery(attempts: string): string {
  return `
    SELECT carrier, order_code, count(*) AS attempts, min(attempted_at) AS first_attempt_at, max(attempted_at) AS last_attempt_at,
           -- An unordered list sorted per order: an ordered string_agg sorts far slower.
           array_to_string(list_transform(list_sort(list({attempted_at: attempted_at, code: coalesce(delay_code, '?')})), a -> a.code), ', ') AS delay_codes
    FROM ${attempts}
    GROUP BY carrier, order_code
    HAVING count(*) >= 2`;
}

/** Rows of repeatedAttemptsQuery with their order's account and status now, the most attempts first. */
function withOrdersNow(repeated: string): string {
  return `
    SELECT r.carrier, r.order_code, o.account_alias, r.attempts, r.first_attempt_at, r.last_attempt_at, r.delay_codes,
           o.status AS status_now
    FROM ${repeated} AS r
    LEFT JOIN orders AS o ON ${sameOrder('o', 'r')}
    ORDER BY r.attempts DESC, r.order_code`;
}

/** Orders with two or more failed attempts among `attempts`, their reasons in order. */
export function repeatedFailuresQuery(attempts: string): string {
  return withOrdersNow(`(${repeatedAttemptsQuery(attempts)})`);
}

/**
 * Orders whose status now is a failed attempt of their carrier's (247Express's 16, awaiting handling;
 * GHN's delivery_fail), with their last reason,
 * when that status came and how long they have waited until `now` (a TIMESTAMPTZ expression).
 */
export function awaitingHandlingQuery(now: string, account?: string): string {
  return `
    WITH awaiting AS (
      SELECT * FROM orders
      WHERE ${failedAttemptStatusIn()}${account === undefined ? '' : ` AND account_alias = ${sqlText(account)}`}
    ),
    since AS (
      SELECT carrier, order_code, "time" AS awaiting_since, province_name, post_office_name
      FROM order_statuses WHERE ${failedAttemptStatusIn()} AND ${ofOrdersIn('awaiting')}
      QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY "time" DESC, seq DESC) = 1
    ),
    last_failure AS (
      SELECT carrier, order_code, delay_code, delay_note FROM delivery_failures WHERE ${ofOrdersIn('awaiting')}
      QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY attempted_at DESC) = 1
    )
    SELECT o.carrier, o.order_code, o.account_alias, s.awaiting_since,
           coalesce(o.delay_code, f.delay_code) AS delay_code, d.meaning AS delay_meaning,
           coalesce(o.delay_note, f.delay_note) AS delay_note,
           round((epoch_us(${now}) - epoch_us(s.awaiting_since)) / 3600e6, 1) AS waited_hours,
           s.province_name, s.post_office_name
    FROM awaiting AS o
    LEFT JOIN since AS s ON ${sameOrder('s', 'o')}
    LEFT JOIN last_failure AS f ON ${sameOrder('f', 'o')}
    LEFT JOIN delay_reasons AS d ON ${sameReason('d', 'coalesce(o.delay_code, f.delay_code)', 'o')}
    ORDER BY waited_hours DESC NULLS LAST, o.order_code`;
}

/** The temporary tables a failures run keeps its parts' attempts in, and groups their repeated attempts into. */
const RUN_FAILURES = 'report_run_failures';
const RUN_REPEATED = 'report_run_repeated_failures';

/**
 * How a failures run splits its work over a long history: `parts`, scopes that hold the scope's
 * attempts once each in the order of their days, are numbered and sorted one after another;
 * `orderGroups` statements group the attempts per order, each for the orders of one hash group, as
 * a list per order takes memory DuckDB cannot spill.
 */
export interface FailuresSplit {
  readonly parts?: readonly ReportScope[];
  readonly orderGroups?: number;
}

/** Statements filling a temporary table with the rows of each query in turn. */
function filledInTurn(table: string, queries: readonly string[]): string[] {
  return queries.map((query, index) => (index === 0 ? temporaryTable(table, query) : `INSERT INTO ${table} ${query}`));
}

/**
 * A failures report's tables, and `attempts`, the relation of its scope's attempts that its breakdowns
 * read. Only the `failures` and `failures-repeated` tables read what `prepare` fills.
 */
export interface FailuresTables extends ReportTables {
  readonly attempts: string;
}

/**
 * The files of a failures report: the attempts, the breakdowns, repeated failures and orders awaiting
 * handling. The breakdowns read the warehouse's compressed rows themselves, not a table of every
 * attempt with its order's columns. With parts, each part's attempts are numbered and sorted in a
 * statement of its own, so no statement holds more than a part, and the file reads them in order.
 */
export function failuresTables(scope: ReportScope, now: string, split: FailuresSplit = {}): FailuresTables {
  const attempts = `(${scopedAttemptsQuery(scope)})`;
  const ordered = (part: ReportScope) => `${scopedFailuresQuery(part)} ORDER BY attempted_at, order_code`;
  const parts = split.parts ?? [];
  const groups = Math.max(1, split.orderGroups ?? 1);
  const grouped = Array.from({ length: groups }, (_, group) =>
    repeatedAttemptsQuery(
      groups === 1 ? attempts : `(SELECT * FROM ${attempts} WHERE hash(order_code) % ${groups} = ${group})`,
    ),
  );
  return {
    attempts,
    prepare: [...filledInTurn(RUN_FAILURES, parts.map(ordered)), ...filledInTurn(RUN_REPEATED, grouped)],
    tables: [
      { name: 'failures', query: parts.length === 0 ? ordered(scope) : `SELECT * FROM ${RUN_FAILURES}` },
      { name: 'failures-by-reason', query: failuresByReasonQuery(attempts) },
      { name: 'failures-by-province', query: failuresByProvinceQuery(attempts) },
      { name: 'failures-by-post-office', query: failuresByPostOfficeQuery(attempts) },
      { name: 'failures-by-week', query: failuresByWeekQuery(attempts) },
      { name: 'failures-repeated', query: withOrdersNow(RUN_REPEATED) },
      { name: 'failures-awaiting', query: awaitingHandlingQuery(now, scope.account) },
    ],
  };
}
