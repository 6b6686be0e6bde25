import { STATUS } from '../carrier/contract.js';
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

/** Meaning shown for an attempt whose reason no snapshot or callback brought. */
export const UNKNOWN_REASON = 'reason not observed';

/**
 * One row per failed delivery attempt (`delivery_failures`, from tracking snapshots and callbacks, or
 * `attempts`, a relation of its rows holding every attempt of each of its orders), with its order's
 * account and status now, the reason's meaning, its carrier-local day and ISO week, and its number
 * among the order's attempts.
 */
export function failuresQuery(attempts = 'delivery_failures'): string {
  return `
    SELECT f.order_code, o.account_alias, f.attempted_at, ${carrierDate('f.attempted_at')} AS attempted_day,
           ${carrierIsoWeek('f.attempted_at')} AS iso_week,
           row_number() OVER (PARTITION BY f.order_code ORDER BY f.attempted_at) AS attempt_no,
           f.delay_code, coalesce(d.meaning, CASE WHEN f.delay_code IS NULL THEN '${UNKNOWN_REASON}' END) AS delay_meaning,
           f.delay_note, f.province_name, f.post_office_name, f.source, f.observed_at, o.status AS status_now
    FROM ${attempts} AS f
    LEFT JOIN orders AS o ON o.order_code = f.order_code
    LEFT JOIN delay_reasons AS d ON d.code = f.delay_code`;
}

/** The columns a scope limits attempts by: the attempt's time, its order's account. */
export const ATTEMPT_COLUMNS = { time: 'attempted_at', account: 'account_alias' } as const;

/**
 * The attempts of a scope (days of the attempt, the order's account), numbered among all of their
 * order's attempts: only the orders with an attempt in the days are numbered, which reads the days'
 * row groups, not the whole history.
 */
export function scopedFailuresQuery(scope: ReportScope): string {
  const days = scopeCondition({ fromDay: scope.fromDay, toDay: scope.toDay }, ATTEMPT_COLUMNS);
  const attempts =
    days === 'true'
      ? 'delivery_failures'
      : `(SELECT * FROM delivery_failures WHERE ${codeRangeCondition(scope)} AND order_code IN (SELECT order_code FROM delivery_failures WHERE ${days}))`;
  return `SELECT * FROM ${scoped(`(${failuresQuery(attempts)})`, scope, ATTEMPT_COLUMNS)}`;
}

/** Counts and shares of the failures of a relation of failuresQuery rows, grouped by `keys`. */
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

/** Orders with two or more failed attempts among the rows, their reasons in order. */
export function repeatedFailuresQuery(failures: string): string {
  return `
    SELECT order_code, any_value(account_alias) AS account_alias, count(*) AS attempts,
           min(attempted_at) AS first_attempt_at, max(attempted_at) AS last_attempt_at,
           -- An unordered list sorted per order: an ordered string_agg sorts far slower.
           array_to_string(list_transform(list_sort(list({attempted_at: attempted_at, code: coalesce(delay_code, '?')})), a -> a.code), ', ') AS delay_codes,
           any_value(status_now) AS status_now
    FROM ${failures}
    GROUP BY order_code
    HAVING count(*) >= 2
    ORDER BY attempts DESC, order_code`;
}

/**
 * Orders whose status now is 16 (awaiting handling after a failed attempt), with their last reason,
 * when that status came and how long they have waited until `now` (a TIMESTAMPTZ expression).
 */
export function awaitingHandlingQuery(now: string, account?: string): string {
  return `
    WITH awaiting AS (
      SELECT * FROM orders
      WHERE status = '${STATUS.AWAITING_HANDLING}'${account === undefined ? '' : ` AND account_alias = ${sqlText(account)}`}
    ),
    since AS (
      SELECT order_code, "time" AS awaiting_since, province_name, post_office_name
      FROM order_statuses WHERE status = '${STATUS.AWAITING_HANDLING}' AND order_code IN (SELECT order_code FROM awaiting)
      QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY "time" DESC, seq DESC) = 1
    ),
    last_failure AS (
      SELECT order_code, delay_code, delay_note FROM delivery_failures WHERE order_code IN (SELECT order_code FROM awaiting)
      QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY attempted_at DESC) = 1
    )
    SELECT o.order_code, o.account_alias, s.awaiting_since,
           coalesce(o.delay_code, f.delay_code) AS delay_code, d.meaning AS delay_meaning,
           coalesce(o.delay_note, f.delay_note) AS delay_note,
           round((epoch_us(${now}) - epoch_us(s.awaiting_since)) / 3600e6, 1) AS waited_hours,
           s.province_name, s.post_office_name
    FROM awaiting AS o
    LEFT JOIN since AS s ON s.order_code = o.order_code
    LEFT JOIN last_failure AS f ON f.order_code = o.order_code
    LEFT JOIN delay_reasons AS d ON d.code = coalesce(o.delay_code, f.delay_code)
    ORDER BY waited_hours DESC NULLS LAST, o.order_code`;
}

/** The temporary table a failures run keeps the attempts of its scope in. */
const RUN_FAILURES = 'report_run_failures';

/** The files of a failures report: the attempts, the breakdowns, repeated failures and orders awaiting handling. */
export function failuresTables(scope: ReportScope, now: string): ReportTables {
  return {
    prepare: [temporaryTable(RUN_FAILURES, scopedFailuresQuery(scope))],
    tables: [
      { name: 'failures', query: `SELECT * FROM ${RUN_FAILURES} ORDER BY attempted_at, order_code` },
      { name: 'failures-by-reason', query: failuresByReasonQuery(RUN_FAILURES) },
      { name: 'failures-by-province', query: failuresByProvinceQuery(RUN_FAILURES) },
      { name: 'failures-by-post-office', query: failuresByPostOfficeQuery(RUN_FAILURES) },
      { name: 'failures-by-week', query: failuresByWeekQuery(RUN_FAILURES) },
      { name: 'failures-repeated', query: repeatedFailuresQuery(RUN_FAILURES) },
      { name: 'failures-awaiting', query: awaitingHandlingQuery(now, scope.account) },
    ],
  };
}
