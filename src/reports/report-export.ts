import { mkdir } from 'node:fs/promises';
import { carrierDayOf, DAY_MS } from '../carriers/carrier-time.js';
import { formatVnd, moneyFromText } from '../carriers/money.js';
import { sqlText, timestampLiteral } from '../warehouse/sql-literals.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { CHARGE_CHECKS, type ChargeRules, chargesTables, narrowMoneyQuery } from './charges-report.js';
import { COD_CHECKS, type CodRules, codTables } from './cod-report.js';
import { ATTEMPT_COLUMNS, type FailuresTables, failuresTables } from './failures-report.js';
import { loadPartnerRecords, PARTNER_RECORDS, type PartnerRecordsSource } from './partner-records.js';
import { rankedFindingLines } from './ranked-findings.js';
import {
  FINDING_KINDS,
  partnerCodQuery,
  partnerInvoicesQuery,
  type ReconcileRules,
  RUN_FINDINGS,
  reconcileTables,
} from './reconcile-report.js';
import {
  carrierDate,
  codeRangeCondition,
  codeRangeOf,
  ORDER_COLUMNS,
  type ReportScope,
  type ReportTables,
  reportTable,
  scopeCondition,
} from './report-sql.js';
import type { ReportFormat } from './writers/report-formats.js';
import { inAnyOrder, type WrittenFile, writeReportTables } from './writers/report-writer.js';

/** What to export: the range and account, the files' format and folder, and the report's "now". */
export interface ReportRequest {
  readonly scope: ReportScope;
  readonly now: number;
  readonly format: ReportFormat;
  readonly outDir: string;
  /** The time zone the files show times in (an IANA name). */
  readonly timeZone: string;
}

/** What a report run leaves: its files, figures for a machine and lines for a person. */
export interface ReportSummary {
  readonly report: string;
  readonly range: { readonly from: string; readonly to: string };
  readonly account: string | null;
  readonly carrier: string | null;
  readonly files: readonly WrittenFile[];
  readonly figures: Record<string, unknown>;
  readonly lines: readonly string[];
}

type ReportWork = ReportTables & {
  summarize: (files: readonly WrittenFile[]) => Promise<Pick<ReportSummary, 'figures' | 'lines'>>;
};
type ReportRange = { readonly from: string; readonly to: string };

async function rows(warehouse: Warehouse, query: string): Promise<Record<string, unknown>[]> {
  return (await warehouse.readAll(query)).getRowObjectsJson() as Record<string, unknown>[];
}

/** A summary's amount (DECIMAL text) as its exact decimal, whole dong without decimals (`4192514`). */
function exactVnd(value: unknown): string {
  return moneyFromText(String(value ?? 0));
}

/** The column whose earliest carrier day starts a report's range when --from is not given. */
export interface RangeStart {
  readonly table: string;
  readonly time: string;
}

/** The column whose earliest day starts a charges or reconcile report's range: every order has one. */
export const ORDERS_BY_ORDER_DATE: RangeStart = { table: 'orders', time: 'order_date' };
/** The column whose earliest day starts a failures report's range. */
export const FAILURES_BY_ATTEMPT: RangeStart = { table: 'delivery_failures', time: 'attempted_at' };
/** Attempts carry no account of their own: a failures report splits them by their days alone. */
const ATTEMPTS_BY_DAY = { table: 'delivery_failures', columns: ATTEMPT_COLUMNS } as const;

/** A report's days: the scope's, else from the earliest day of `earliestOf` to the carrier day of `now`. */
export async function settleReportRange(
  warehouse: Warehouse,
  scope: ReportScope,
  now: number,
  earliestOf: RangeStart,
): Promise<{ from: string; to: string }> {
  const to = scope.toDay ?? carrierDayOf(now);
  if (scope.fromDay !== undefined) return { from: scope.fromDay, to };
  const [earliest] = await rows(
    warehouse,
    // The day of the earliest time, not the earliest day: DuckDB reads a column's minimum from its statistics.
    `SELECT CAST(${carrierDate(`min(${earliestOf.time})`)} AS VARCHAR) AS day FROM ${earliestOf.table}`,
  );
  return { from: typeof earliest?.day === 'string' && earliest.day < to ? earliest.day : to, to };
}

/**
 * The scope with the range of its orders' codes (the orders of `table` in the scope's days, and its
 * account where `table` has the column), when it limits the days: what a report over a few days of a
 * long history reads of the per-order tables.
 */
export async function withOrderCodes(
  warehouse: Warehouse,
  scope: ReportScope,
  table: string,
  columns: { readonly time: string; readonly account: string },
): Promise<ReportScope> {
  if (scope.fromDay === undefined && scope.toDay === undefined) return scope;
  const ranges = await rows(
    warehouse,
    `SELECT carrier, min(order_code) AS first, max(order_code) AS last FROM ${table}
     WHERE ${scopeCondition(scope, columns)} GROUP BY carrier`,
  );
  const codes = codeRangeOf(ranges);
  return codes === undefined ? scope : { ...scope, codes };
}

/** Orders a charges report joins with the partner's invoices at once; a scope of more is joined a month at a time. */
const ORDERS_AT_ONCE = 2_000_000;

/** Attempts a failures report numbers, or groups per order, at once; more are split into parts. */
const ATTEMPTS_AT_ONCE = 1_000_000;

/** The first day of the month after `day`'s (YYYY-MM-DD). */
function nextMonth(day: string): string {
  const date = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  date.setUTCMonth(date.getUTCMonth() + 1);
  return date.toISOString().slice(0, 10);
}

function dayBefore(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
}

/** Rows a report splits by their days: a table, its time and account columns. */
interface DayRows {
  readonly table: string;
  readonly columns: { readonly time: string; readonly account: string };
}

const ORDERS_BY_DAY: DayRows = { table: 'orders', columns: ORDER_COLUMNS };

/** The rows of `of` in a scope. */
async function rowCount(warehouse: Warehouse, scope: ReportScope, of: DayRows): Promise<number> {
  const [size] = await rows(
    warehouse,
    `SELECT count(*) AS n FROM ${of.table} WHERE ${scopeCondition(scope, of.columns)}`,
  );
  return Number(size?.n ?? 0);
}

/**
 * A scope of more than `rowsAtOnce` rows of `of` (orders by default) as parts: each calendar month of
 * the range, then the scope's rows outside the range's days (an open end, or no time), each with its
 * range of codes. None for a smaller scope.
 */
export async function monthParts(
  warehouse: Warehouse,
  scope: ReportScope,
  range: ReportRange,
  rowsAtOnce = ORDERS_AT_ONCE,
  of: DayRows = ORDERS_BY_DAY,
): Promise<ReportScope[]> {
  return (await rowCount(warehouse, scope, of)) <= rowsAtOnce ? [] : everyMonth(warehouse, scope, range, of);
}

/** The parts monthParts gives a large scope: each month of the range, then the rows outside its days. */
async function everyMonth(
  warehouse: Warehouse,
  scope: ReportScope,
  range: ReportRange,
  of: DayRows,
): Promise<ReportScope[]> {
  const parts: ReportScope[] = [];
  for (let from = range.from; from <= range.to; from = nextMonth(from)) {
    const monthEnd = dayBefore(nextMonth(from));
    parts.push({
      fromDay: from,
      toDay: [monthEnd, range.to].sort()[0],
      account: scope.account,
      carrier: scope.carrier,
    });
  }
  if (scope.fromDay === undefined || scope.toDay === undefined) {
    const days = scopeCondition({ fromDay: range.from, toDay: range.to }, of.columns);
    parts.push({ ...scope, condition: `${of.columns.time} IS NULL OR NOT (${days})` });
  }
  const withCodes: ReportScope[] = [];
  for (const part of parts) withCodes.push(await withOrderCodes(warehouse, part, of.table, of.columns));
  return withCodes;
}

/**
 * The charges tables of a scope as every charges report computes them: within the range of its
 * orders' codes, in 64-bit decimals when its amounts allow. The audit rows hold all the checks read
 * of an order, so one pass over them holds no more than the flagged orders' rows; the partner's
 * invoices, when given, are joined a month at a time over many orders (`range`: its days, settled),
 * which bounds the memory of the join.
 */
export async function scopedChargesTables(
  warehouse: Warehouse,
  rules: ChargeRules,
  scope: ReportScope,
  range: ReportRange,
  options: { readonly invoices?: string | undefined; readonly flaggedOnly?: boolean } = {},
): Promise<ReportTables> {
  const withCodes = await withOrderCodes(warehouse, scope, 'orders', ORDER_COLUMNS);
  const parts = options.invoices === undefined ? [] : await monthParts(warehouse, scope, range);
  const [amounts] = await rows(warehouse, narrowMoneyQuery(withCodes));
  return chargesTables(rules, withCodes, { ...options, parts, narrowMoney: amounts?.narrow === true });
}

/** A failures scope with the range of codes of its days' attempts (attempts carry no account). */
export async function withAttemptCodes(warehouse: Warehouse, scope: ReportScope): Promise<ReportScope> {
  const days = { fromDay: scope.fromDay, toDay: scope.toDay, carrier: scope.carrier };
  const { codes } = await withOrderCodes(warehouse, days, 'delivery_failures', ATTEMPT_COLUMNS);
  return { ...scope, codes };
}

/**
 * The failures tables of a scope as every failures report file computes them: within the range of
 * codes of its days' attempts, a month at a time over many attempts (`range`: its days, settled),
 * orders awaiting handling waiting until `now`.
 */
export async function scopedFailuresTables(
  warehouse: Warehouse,
  scope: ReportScope,
  range: ReportRange,
  now: number,
): Promise<FailuresTables> {
  const days = { fromDay: scope.fromDay, toDay: scope.toDay, carrier: scope.carrier };
  const attempts = await rowCount(warehouse, days, ATTEMPTS_BY_DAY);
  const parts = attempts <= ATTEMPTS_AT_ONCE ? [] : await everyMonth(warehouse, days, range, ATTEMPTS_BY_DAY);
  return failuresTables(await withAttemptCodes(warehouse, scope), timestampLiteral(now), {
    parts: parts.map((part) => ({ ...part, account: scope.account })),
    orderGroups: Math.ceil(attempts / ATTEMPTS_AT_ONCE),
  });
}

/** Runs a report's statements that fill its temporary tables. */
export async function prepareReportTables(warehouse: Warehouse, report: ReportTables): Promise<void> {
  await inAnyOrder(warehouse.connection, report.prepareInAnyOrder === true, async () => {
    for (const statement of report.prepare) await warehouse.run(statement);
  });
}

/** Runs the report's statements and writes its tables under `outDir`, named with its range. */
async function exportReport(
  warehouse: Warehouse,
  report: string,
  request: ReportRequest,
  earliestOf: RangeStart,
  work: (range: ReportRange) => Promise<ReportWork>,
): Promise<ReportSummary> {
  const range = await settleReportRange(warehouse, request.scope, request.now, earliestOf);
  await mkdir(request.outDir, { recursive: true });
  const tables = await work(range);
  await prepareReportTables(warehouse, tables);
  const files = await writeReportTables(warehouse.connection, tables.tables, {
    outDir: request.outDir,
    format: request.format,
    range,
    timeZone: request.timeZone,
  });
  return {
    report,
    range,
    account: request.scope.account ?? null,
    carrier: request.scope.carrier ?? null,
    files,
    ...(await tables.summarize(files)),
  };
}

/** The charges audit; `invoices` adds the partner's invoiced amounts to compare the totals with. */
export function exportChargesReport(
  warehouse: Warehouse,
  rules: ChargeRules,
  request: ReportRequest,
  options: { readonly invoices?: PartnerRecordsSource | undefined; readonly flaggedOnly?: boolean } = {},
): Promise<ReportSummary> {
  return exportReport(warehouse, 'charges', request, ORDERS_BY_ORDER_DATE, async (range) => {
    let invoices: string | undefined;
    if (options.invoices !== undefined) {
      await loadPartnerRecords(warehouse.connection, options.invoices);
      invoices = partnerInvoicesQuery();
    }
    const report = await scopedChargesTables(warehouse, rules, request.scope, range, {
      invoices,
      flaggedOnly: options.flaggedOnly === true,
    });
    return {
      ...report,
      summarize: async () => {
        const summary = (
          await rows(
            warehouse,
            `SELECT * FROM (${reportTable(report, 'charges-summary').query}) WHERE account_alias = '*'`,
          )
        ).map((r): Record<string, unknown> => ({ ...r, amount_at_stake: exactVnd(r.amount_at_stake) }));
        const any = summary.find((r) => r.check_name === 'any');
        const checks = summary
          .filter((r) => r.check_name !== 'any')
          .map((r) => ({
            name: String(r.check_name),
            count: Number(r.orders_flagged),
            atStake: CHARGE_CHECKS.find((c) => c.name === r.check_name)?.money ? String(r.amount_at_stake) : null,
          }));
        const lines = [
          `${Number(any?.orders_checked ?? 0)} orders checked, ${Number(any?.orders_flagged ?? 0)} flagged, ${formatVnd(String(any?.amount_at_stake ?? 0))} VND at stake`,
          ...rankedFindingLines(checks, { kinds: 'checks', unit: 'orders' }),
        ];
        return { figures: { checks: summary }, lines };
      },
    };
  });
}

/** Failed delivery attempts per reason, province, post office and week; repeated failures; orders awaiting handling. */
export function exportFailuresReport(warehouse: Warehouse, request: ReportRequest): Promise<ReportSummary> {
  return exportReport(warehouse, 'failures', request, FAILURES_BY_ATTEMPT, async (range) => {
    const report = await scopedFailuresTables(warehouse, request.scope, range, request.now);
    const query = (name: string) => report.tables.find((t) => t.name === name)!.query;
    return {
      ...report,
      summarize: async (files) => {
        // The files' row counts are the repeated and awaiting orders: counting them again would compute them again.
        const written = (table: string) => files.find((f) => f.table === table)!.rows;
        const reasons = await rows(warehouse, query('failures-by-reason'));
        const repeatedOrders = written('failures-repeated');
        const awaitingOrders = written('failures-awaiting');
        const [awaiting] = await rows(
          warehouse,
          `SELECT max(waited_hours) AS longest FROM (${query('failures-awaiting')})`,
        );
        const failures = reasons.reduce((sum, r) => sum + Number(r.failures), 0);
        const lines = [
          `${failures} failed attempts`,
          ...reasons
            .slice(0, 3)
            .map(
              (r) =>
                `reason ${String(r.delay_code ?? '?')} (${String(r.delay_meaning)}): ${Number(r.failures)} (${(Number(r.share) * 100).toFixed(1)}%)`,
            ),
          `${repeatedOrders} orders failed twice or more`,
          `${awaitingOrders} orders awaiting handling${awaiting?.longest == null ? '' : `, the longest for ${Number(awaiting.longest)} h`}`,
        ];
        return {
          figures: { failures, byReason: reasons, repeatedOrders, awaitingOrders },
          lines,
        };
      },
    };
  });
}

/**
 * The range of the order codes a reconcile compares, when the scope limits the days: those of the
 * scope's orders and of the partner's lines, loaded first. The carrier hands out codes in order, so a
 * month's reconcile reads about a month of the warehouse.
 */
export async function reconciledCodes(warehouse: Warehouse, scope: ReportScope): Promise<ReportScope['codes']> {
  if (scope.fromDay === undefined && scope.toDay === undefined) return undefined;
  const ranges = await rows(
    warehouse,
    `SELECT carrier, min(order_code) AS first, max(order_code) AS last FROM (
       SELECT carrier, order_code FROM orders WHERE ${scopeCondition(scope, ORDER_COLUMNS)}
       UNION ALL SELECT NULL AS carrier, order_code FROM ${PARTNER_RECORDS})
     GROUP BY carrier`,
  );
  return codeRangeOf(ranges);
}

/**
 * Orders and partner lines a reconcile joins at once: smaller parts than the charges' take no longer
 * over a long history and hold less memory.
 */
const RECONCILE_ROWS_AT_ONCE = 1_000_000;

/**
 * Order codes that split a reconcile of more than `rowsAtOnce` orders and partner lines into parts
 * of about that many; none for a smaller one. They are the codes of evenly spaced rows of the orders
 * in `codes`: any codes give the same findings, and the carrier's codes rise with the rows' order,
 * so each part reads a stretch of the warehouse.
 */
export async function reconcileBoundaries(
  warehouse: Warehouse,
  codes: ReportScope['codes'],
  partnerLines: number,
  rowsAtOnce = RECONCILE_ROWS_AT_ONCE,
): Promise<string[]> {
  const inCodes = codeRangeCondition({ codes });
  const [size] = await rows(warehouse, `SELECT count(*) AS orders FROM orders WHERE ${inCodes}`);
  const orders = Number(size?.orders ?? 0);
  const parts = Math.ceil((orders + partnerLines) / rowsAtOnce);
  if (parts <= 1) return [];
  const sample = await rows(
    warehouse,
    `SELECT order_code FROM orders WHERE ${inCodes} AND rowid % ${Math.ceil(orders / parts)} = 0 ORDER BY order_code`,
  );
  return sample.map((row) => String(row.order_code));
}

/** Where the partner's own records and the carrier disagree, one row per finding. */
export function exportReconcileReport(
  warehouse: Warehouse,
  rules: ReconcileRules,
  source: PartnerRecordsSource,
  request: ReportRequest,
): Promise<ReportSummary> {
  return exportReport(warehouse, 'reconcile', request, ORDERS_BY_ORDER_DATE, async () => {
    const lines = await loadPartnerRecords(warehouse.connection, source);
    const codes = await reconciledCodes(warehouse, request.scope);
    const report = reconcileTables(rules, request.scope, codes, await reconcileBoundaries(warehouse, codes, lines));
    return {
      ...report,
      summarize: async () => {
        const counts = await rows(
          warehouse,
          `SELECT finding, count(*) AS findings, sum(abs(difference)) AS at_stake FROM ${RUN_FINDINGS} GROUP BY finding`,
        );
        const found = FINDING_KINDS.map(({ kind }) => {
          const count = counts.find((c) => c.finding === kind);
          return {
            name: kind,
            count: Number(count?.findings ?? 0),
            atStake: count?.at_stake == null ? null : exactVnd(count.at_stake),
          };
        });
        const byKind = Object.fromEntries(found.map((f) => [f.name, f.count]));
        const atStakeByKind = Object.fromEntries(
          found.flatMap((f) => (f.atStake === null ? [] : [[f.name, f.atStake]])),
        );
        const ranked = rankedFindingLines(found, { kinds: 'kinds of findings', unit: 'findings' });
        return {
          figures: { partnerLines: lines, findings: byKind, atStake: atStakeByKind },
          lines: [`${lines} partner lines read`, ...(ranked.length === 0 ? ['no findings'] : ranked)],
        };
      },
    };
  });
}

/** Where the carriers' payout statements and the delivered COD orders disagree, one row per finding. */
export function exportCodReport(
  warehouse: Warehouse,
  rules: CodRules,
  request: ReportRequest,
  shopRecords?: PartnerRecordsSource,
): Promise<ReportSummary> {
  return exportReport(warehouse, 'cod', request, ORDERS_BY_ORDER_DATE, async () => {
    if (shopRecords !== undefined) await loadPartnerRecords(warehouse.connection, shopRecords);
    const today = `DATE ${sqlText(carrierDayOf(request.now))}`;
    const report = codTables(rules, request.scope, today, shopRecords === undefined ? undefined : partnerCodQuery());
    return {
      ...report,
      summarize: async () => {
        const overall = await rows(
          warehouse,
          `SELECT check_name, findings, settled, at_stake FROM (${reportTable(report, 'cod-summary').query}) WHERE carrier = '*'`,
        );
        const found = COD_CHECKS.map(({ name }) => {
          const row = overall.find((r) => r.check_name === name);
          const settled = Number(row?.settled ?? 0);
          return { name, count: Number(row?.findings ?? 0), settled, atStake: exactVnd(row?.at_stake ?? 0) };
        });
        const [outstanding] = await rows(
          warehouse,
          `SELECT coalesce(sum(orders), 0) AS orders, coalesce(sum(outstanding), 0) AS outstanding FROM (${reportTable(report, 'cod-outstanding').query})`,
        );
        const ranked = rankedFindingLines(found, { kinds: 'checks', unit: 'findings' });
        return {
          figures: {
            findings: Object.fromEntries(found.map((f) => [f.name, f.count])),
            atStake: Object.fromEntries(found.map((f) => [f.name, f.atStake])),
            settled: Object.fromEntries(found.map((f) => [f.name, f.settled])),
            outstandingOrders: Number(outstanding?.orders ?? 0),
            outstanding: exactVnd(outstanding?.outstanding),
          },
          lines: [
            `${Number(outstanding?.orders ?? 0)} delivered COD orders in no statement, ${formatVnd(exactVnd(outstanding?.outstanding))} VND outstanding`,
            ...(ranked.length === 0 ? ['no findings'] : ranked),
          ],
        };
      },
    };
  });
}
