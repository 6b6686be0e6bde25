import { rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { carrierDayOf } from '../../carriers/carrier-time.js';
import { makeFolder } from '../../errors/disk-fault.js';
import { sqlText, timestampLiteral } from '../../warehouse/sql-literals.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { CHARGE_CHECKS, DEFAULT_CHARGE_RULES } from '../charges-report.js';
import { COD_CHECKS, type CodRules, codTables, DEFAULT_COD_RULES } from '../cod-report.js';
import { formatDisplayTime } from '../display-time.js';
import { failuresByWeekAndReasonQuery, failuresTables } from '../failures-report.js';
import {
  ORDERS_BY_ORDER_DATE,
  prepareReportTables,
  scopedChargesTables,
  settleReportRange,
  withAttemptCodes,
} from '../report-export.js';
import { type ReportScope, reportTable } from '../report-sql.js';
import { latestRunsQuery, quotaUsageQuery } from '../runs-report.js';
import { asTextQuery } from '../writers/column-text.js';
import {
  type Column,
  chartFigure,
  escapeHtml,
  figures,
  formatValue,
  htmlPage,
  htmlTable,
  type TextRow,
} from './html-page.js';
import { type ChartRow, chartSvg, horizontalBars, stackedColumns } from './report-charts.js';

/** What the page covers: carrier-local days (inclusive; absent means no limit), one account, and the report's "now". */
export interface HtmlReportOptions {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly account?: string | undefined;
  /** One carrier only; absent, every carrier side by side. */
  readonly carrier?: string | undefined;
  /** Epoch milliseconds: the time orders awaiting handling have waited until, and the page's date. */
  readonly now: number;
  /** Rows a table shows at most (the CSV reports have them all). */
  readonly rowLimit?: number;
  /** The time zone the page shows times in (an IANA name). */
  readonly timeZone: string;
  /** The rules of its COD section (settings `cod.*`); the defaults when not given. */
  readonly codRules?: CodRules;
}

/** Tables stop at this many rows, so the page stays small over a large warehouse. */
export const HTML_ROW_LIMIT = 200;
/** Bars a province or post office chart draws. */
const CHART_TOP = 25;
/** Reasons the weekly chart tells apart; the rest are one colour. */
const CHART_REASONS = 10;
const OTHER_REASONS = 'other reasons';
/** Runs the run summary lists. */
const RUNS_SHOWN = 30;

/** The ranked rows of a query, at most `limit`, and how many it has in all (`total`, when known). */
async function topRows(
  warehouse: Warehouse,
  zone: string,
  query: string,
  limit: number,
  total?: number,
): Promise<{ rows: TextRow[]; total: number }> {
  const text = await asTextQuery(warehouse.connection, query, zone);
  const rows = (await warehouse.readAll(`${text.query} LIMIT ${limit}`)).getRowObjects() as TextRow[];
  const all =
    total ??
    (rows.length < limit
      ? rows.length
      : Number((await warehouse.readAll(`SELECT count(*) AS n FROM (${query})`)).getRowObjectsJson()[0]!.n));
  return { rows: rows.map((row) => Object.fromEntries(cellTexts(text.columns, row))), total: all };
}

/** A row's cells in the columns' order, each as text (null stays null). */
function cellTexts(columns: readonly string[], row: Record<string, unknown>): [string, string | null][] {
  return columns.map((c) => [c, row[c] === null || row[c] === undefined ? null : String(row[c])]);
}

async function allRows(warehouse: Warehouse, zone: string, query: string): Promise<TextRow[]> {
  return (await topRows(warehouse, zone, query, Number.MAX_SAFE_INTEGER)).rows;
}

function chartRows(
  rows: readonly TextRow[],
  fields: Record<string, (row: TextRow) => string | number | null | undefined>,
): ChartRow[] {
  return rows.map((row) => Object.fromEntries(Object.entries(fields).map(([name, of]) => [name, of(row) ?? null])));
}

async function chartOrNothing(
  name: string,
  caption: string,
  rows: readonly ChartRow[],
  spec: Parameters<typeof chartSvg>[0],
): Promise<string> {
  return chartFigure(name, caption, rows.length === 0 ? null : await chartSvg(spec));
}

function scrolling(table: string): string {
  return `<div class="scroll">${table}</div>`;
}

const reasonLabel = (row: TextRow): string => `${row.delay_code ?? '?'} ${row.delay_meaning ?? ''}`.trim();

async function runsSection(warehouse: Warehouse, zone: string, scope: ReportScope): Promise<string> {
  const runs = await allRows(warehouse, zone, latestRunsQuery(scope, RUNS_SHOWN));
  const quota = await allRows(warehouse, zone, quotaUsageQuery(scope));
  const perKey = new Map<string, { lookups: number; days: number; busiest: number }>();
  for (const row of quota) {
    const key = perKey.get(row.key_alias!) ?? { lookups: 0, days: 0, busiest: 0 };
    const lookups = Number(row.lookups);
    perKey.set(row.key_alias!, {
      lookups: key.lookups + lookups,
      days: key.days + 1,
      busiest: Math.max(key.busiest, lookups),
    });
  }
  const keyRows: TextRow[] = [...perKey.entries()].map(([alias, k]) => ({
    key_alias: alias,
    lookups: String(k.lookups),
    days: String(k.days),
    busiest_day: String(k.busiest),
  }));
  const quotaChart = await chartOrNothing(
    'quota-by-day',
    'Lookups per carrier day and key (quota ledger)',
    quota,
    stackedColumns({
      description: 'Lookups per carrier day and key',
      rows: chartRows(quota, { day: (r) => r.carrier_day, key: (r) => r.key_alias, lookups: (r) => Number(r.lookups) }),
      x: 'day',
      xTitle: 'carrier day',
      stack: 'key',
      stackTitle: 'key',
      value: 'lookups',
      valueTitle: 'lookups',
    }),
  );
  const latest = runs[0];
  return [
    figures([
      { name: 'runs-shown', label: 'runs (latest first)', value: formatValue(String(runs.length), 'count') },
      {
        name: 'latest-run-state',
        label: 'latest run',
        value: latest === undefined ? 'none' : `${latest.job} ${latest.exit_state}`,
      },
      {
        name: 'lookups',
        label: 'lookups in the period',
        value: formatValue(String(quota.reduce((sum, r) => sum + Number(r.lookups), 0)), 'count'),
      },
    ]),
    '<h3>Latest runs</h3>',
    scrolling(
      htmlTable({
        name: 'runs',
        rows: runs,
        columns: [
          { key: 'run_id', title: 'run' },
          { key: 'job', title: 'job' },
          { key: 'source', title: 'source' },
          { key: 'started_at', title: 'started' },
          { key: 'seconds', title: 'seconds', kind: 'number' },
          { key: 'codes_read', title: 'codes read', kind: 'count' },
          { key: 'looked_up_ok', title: 'looked up', kind: 'count' },
          { key: 'carrier_errors', title: 'carrier errors', kind: 'count' },
          { key: 'transport_errors', title: 'transport errors', kind: 'count' },
          { key: 'deferred', title: 'deferred', kind: 'count' },
          { key: 'lookups_spent', title: 'lookups spent', kind: 'count' },
          { key: 'exit_state', title: 'ended' },
        ],
      }),
    ),
    '<h3>Quota use per key</h3>',
    quotaChart,
    htmlTable({
      name: 'quota-per-key',
      rows: keyRows,
      columns: [
        { key: 'key_alias', title: 'key' },
        { key: 'lookups', title: 'lookups', kind: 'count' },
        { key: 'days', title: 'days', kind: 'count' },
        { key: 'busiest_day', title: 'busiest day', kind: 'count' },
      ],
    }),
  ].join('\n');
}

/**
 * The summary's rows, `any` first, then each check by the money it puts at stake over all accounts,
 * largest first (then by orders flagged), its accounts after its row over all of them.
 */
function byMoneyAtStake(rows: readonly TextRow[], overall: readonly TextRow[]): TextRow[] {
  const rank = [...overall]
    .sort(
      (a, b) =>
        Number(a.check_name !== 'any') - Number(b.check_name !== 'any') ||
        Number(b.amount_at_stake) - Number(a.amount_at_stake) ||
        Number(b.orders_flagged) - Number(a.orders_flagged),
    )
    .map((r) => r.check_name);
  // A stable sort: each check's rows keep the account order the query gave them.
  return [...rows].sort((a, b) => rank.indexOf(a.check_name) - rank.indexOf(b.check_name));
}

async function chargesSection(
  warehouse: Warehouse,
  zone: string,
  scope: ReportScope,
  now: number,
  limit: number,
): Promise<string> {
  const range = await settleReportRange(warehouse, scope, now, ORDERS_BY_ORDER_DATE);
  // The flagged orders' rows, kept by the report's one pass over the checks: the top orders are among them.
  const report = await scopedChargesTables(warehouse, DEFAULT_CHARGE_RULES, scope, range, { flaggedOnly: true });
  await prepareReportTables(warehouse, report);
  const [flagged, summary] = [reportTable(report, 'charges').query, reportTable(report, 'charges-summary').query];
  const allSummaryRows = await allRows(warehouse, zone, summary);
  const overall = allSummaryRows.filter((r) => r.account_alias === '*');
  const summaryRows = byMoneyAtStake(allSummaryRows, overall);
  const any = overall.find((r) => r.check_name === 'any');
  const moneyChecks = new Set<string>(CHARGE_CHECKS.filter((c) => c.money).map((c) => c.name));
  const atStake = summaryRows.filter(
    (r) => r.account_alias === '*' && moneyChecks.has(r.check_name!) && Number(r.amount_at_stake) > 0,
  );
  const perAccount = summaryRows.filter(
    (r) => r.account_alias !== '*' && r.check_name !== 'any' && Number(r.orders_flagged) > 0,
  );
  const top = await topRows(
    warehouse,
    zone,
    `SELECT * FROM (${flagged}) ORDER BY amount_at_stake DESC NULLS LAST, order_code`,
    limit,
    Number(any?.orders_flagged ?? 0),
  );
  const flagsOf = (row: Record<string, unknown>) =>
    CHARGE_CHECKS.filter((c) => row[`${c.name}_flag`] === 'true')
      .map((c) => c.name)
      .join(', ');
  const topRowsShown = top.rows.map((row) => ({ ...row, flags: flagsOf(row) }));
  return [
    figures([
      { name: 'orders-checked', label: 'orders checked', value: formatValue(any?.orders_checked ?? '0', 'count') },
      { name: 'orders-flagged', label: 'orders flagged', value: formatValue(any?.orders_flagged ?? '0', 'count') },
      { name: 'amount-at-stake', label: 'at stake (VND)', value: formatValue(any?.amount_at_stake ?? '0', 'money') },
    ]),
    await chartOrNothing(
      'charges-at-stake',
      'Amount at stake per check (VND, all accounts)',
      atStake,
      horizontalBars({
        description: 'Amount at stake per check',
        rows: chartRows(atStake, { check: (r) => r.check_name, amount: (r) => Number(r.amount_at_stake) }),
        category: 'check',
        categoryTitle: 'check',
        value: 'amount',
        valueTitle: 'VND at stake',
      }),
    ),
    await chartOrNothing(
      'charges-flagged',
      'Orders flagged per check and account',
      perAccount,
      stackedColumns({
        description: 'Orders flagged per check and account',
        rows: chartRows(perAccount, {
          check: (r) => r.check_name,
          account: (r) => r.account_alias,
          orders: (r) => Number(r.orders_flagged),
        }),
        x: 'check',
        xTitle: 'check',
        stack: 'account',
        stackTitle: 'account',
        value: 'orders',
        valueTitle: 'orders flagged',
      }),
    ),
    '<h3>Findings per check and account</h3>',
    `<p class="note">Account * is all accounts; check "any" counts orders with at least one flag. ${checkNotes(CHARGE_CHECKS)}</p>`,
    scrolling(
      htmlTable({
        name: 'charges-summary',
        rows: summaryRows,
        columns: [
          { key: 'check_name', title: 'check' },
          { key: 'account_alias', title: 'account' },
          { key: 'orders_flagged', title: 'orders flagged', kind: 'count' },
          { key: 'orders_checked', title: 'orders checked', kind: 'count' },
          { key: 'amount_at_stake', title: 'at stake (VND)', kind: 'money' },
        ],
      }),
    ),
    '<h3>Top orders by amount at stake</h3>',
    scrolling(
      htmlTable({
        name: 'charges-top-orders',
        rows: topRowsShown,
        total: top.total,
        columns: [
          { key: 'carrier', title: 'carrier' },
          { key: 'order_code', title: 'order' },
          { key: 'account_alias', title: 'account' },
          { key: 'status_name', title: 'status' },
          { key: 'total_service_cost', title: 'billed (VND)', kind: 'money' },
          { key: 'amount_at_stake', title: 'at stake (VND)', kind: 'money' },
          { key: 'flags_failed', title: 'flags', kind: 'count' },
          { key: 'flags', title: 'checks failed' },
        ],
      }),
    ),
  ].join('\n');
}

/** The columns naming whose a COD table's row is. */
const CARRIER_AND_ACCOUNT: readonly Column[] = [
  { key: 'carrier', title: 'carrier' },
  { key: 'account_alias', title: 'account' },
];

/**
 * The COD check with the given rules (the settings' `cod.*`), up to the page's last day (COD overdue since before its first
 * is still owed): the money outstanding per account and age, the findings per check and the top ones.
 */
async function codSection(
  warehouse: Warehouse,
  zone: string,
  scope: ReportScope,
  now: number,
  limit: number,
  rules: CodRules,
): Promise<string> {
  const today = `DATE ${sqlText(scope.toDay ?? carrierDayOf(now))}`;
  const report = codTables(rules, { toDay: scope.toDay, account: scope.account, carrier: scope.carrier }, today);
  await prepareReportTables(warehouse, report);
  const outstanding = await allRows(warehouse, zone, reportTable(report, 'cod-outstanding').query);
  const summary = await allRows(warehouse, zone, reportTable(report, 'cod-summary').query);
  const overall = summary.filter((r) => r.carrier === '*');
  const findings = overall.reduce((sum, r) => sum + Number(r.findings), 0);
  const top = await topRows(warehouse, zone, reportTable(report, 'cod').query, limit, findings);
  const sum = (rows: readonly TextRow[], key: string) => String(rows.reduce((total, r) => total + Number(r[key]), 0));
  return [
    figures([
      {
        name: 'cod-outstanding',
        label: 'COD in no statement (VND)',
        value: formatValue(sum(outstanding, 'outstanding'), 'money'),
      },
      { name: 'cod-findings', label: 'COD findings', value: formatValue(String(findings), 'count') },
      { name: 'cod-at-stake', label: 'at stake (VND)', value: formatValue(sum(overall, 'at_stake'), 'money') },
    ]),
    '<h3>Delivered COD in no statement, per account and age</h3>',
    scrolling(
      htmlTable({
        name: 'cod-outstanding',
        rows: outstanding,
        columns: [
          ...CARRIER_AND_ACCOUNT,
          { key: 'aging', title: 'since delivery' },
          { key: 'orders', title: 'orders', kind: 'count' },
          { key: 'outstanding', title: 'outstanding (VND)', kind: 'money' },
        ],
      }),
    ),
    '<h3>Findings per check, carrier and account</h3>',
    `<p class="note">Carrier and account * are all of them; a settled finding is counted, its money is not at stake. ${checkNotes(COD_CHECKS)}</p>`,
    scrolling(
      htmlTable({
        name: 'cod-summary',
        rows: summary,
        columns: [
          { key: 'check_name', title: 'check' },
          ...CARRIER_AND_ACCOUNT,
          { key: 'findings', title: 'findings', kind: 'count' },
          { key: 'disputed', title: 'disputed', kind: 'count' },
          { key: 'settled', title: 'settled', kind: 'count' },
          { key: 'at_stake', title: 'at stake (VND)', kind: 'money' },
        ],
      }),
    ),
    '<h3>Top findings by amount at stake</h3>',
    scrolling(
      htmlTable({
        name: 'cod-findings',
        rows: top.rows,
        total: top.total,
        columns: [
          { key: 'finding', title: 'check' },
          ...CARRIER_AND_ACCOUNT,
          { key: 'batch_id', title: 'batch' },
          { key: 'order_code', title: 'order' },
          { key: 'finding_day', title: 'day' },
          { key: 'at_stake', title: 'at stake (VND)', kind: 'money' },
          { key: 'detail', title: 'detail' },
          { key: 'mark', title: 'mark' },
          { key: 'mark_note', title: 'note' },
        ],
      }),
    ),
  ].join('\n');
}

const BREAKDOWN_COLUMNS: readonly Column[] = [
  { key: 'failures', title: 'failures', kind: 'count' },
  { key: 'orders', title: 'orders', kind: 'count' },
  { key: 'share', title: 'share', kind: 'share' },
];

async function failuresSections(
  warehouse: Warehouse,
  zone: string,
  scope: ReportScope,
  now: number,
  limit: number,
): Promise<{ failures: string; awaiting: string }> {
  // The breakdowns and the orders awaiting handling, which read no table the report's statements fill:
  // the page needs neither its parts nor those statements.
  const report = failuresTables(await withAttemptCodes(warehouse, scope), timestampLiteral(now));
  const query = (name: string) => report.tables.find((t) => t.name === name)!.query;
  const byReason = await allRows(warehouse, zone, query('failures-by-reason'));
  const byWeek = await allRows(warehouse, zone, query('failures-by-week'));
  const byWeekAndReason = await allRows(warehouse, zone, failuresByWeekAndReasonQuery(report.attempts));
  const byProvince = await topRows(warehouse, zone, query('failures-by-province'), limit);
  const byPostOffice = await topRows(warehouse, zone, query('failures-by-post-office'), limit);
  const awaitingByReason = await allRows(
    warehouse,
    zone,
    `SELECT delay_code, delay_meaning, count(*) AS orders FROM (${query('failures-awaiting')}) GROUP BY ALL ORDER BY orders DESC, delay_code`,
  );
  const awaiting = await topRows(
    warehouse,
    zone,
    query('failures-awaiting'),
    limit,
    awaitingByReason.reduce((sum, r) => sum + Number(r.orders), 0),
  );
  const topReasons = new Set(byReason.slice(0, CHART_REASONS).map(reasonLabel));
  const total = byReason.reduce((sum, r) => sum + Number(r.failures), 0);
  const place = (r: TextRow) => r.province_name ?? '(unknown)';
  const failures = [
    figures([
      { name: 'failures', label: 'failed attempts', value: formatValue(String(total), 'count') },
      { name: 'reasons', label: 'reasons', value: formatValue(String(byReason.length), 'count') },
      { name: 'weeks', label: 'ISO weeks', value: formatValue(String(byWeek.length), 'count') },
    ]),
    await chartOrNothing(
      'failures-by-week',
      'Failed attempts per ISO week and reason',
      byWeekAndReason,
      stackedColumns({
        description: 'Failed attempts per ISO week and reason',
        rows: chartRows(byWeekAndReason, {
          week: (r) => r.iso_week,
          reason: (r) => (topReasons.has(reasonLabel(r)) ? reasonLabel(r) : OTHER_REASONS),
          failures: (r) => Number(r.failures),
        }),
        x: 'week',
        xTitle: 'ISO week',
        stack: 'reason',
        stackTitle: 'reason',
        value: 'failures',
        valueTitle: 'failed attempts',
      }),
    ),
    '<h3>Per reason</h3>',
    scrolling(
      htmlTable({
        name: 'failures-by-reason',
        rows: byReason,
        columns: [
          { key: 'delay_code', title: 'code' },
          { key: 'delay_meaning', title: 'reason' },
          ...BREAKDOWN_COLUMNS,
        ],
      }),
    ),
    '<h3>Per ISO week</h3>',
    scrolling(
      htmlTable({
        name: 'failures-by-week',
        rows: byWeek,
        columns: [{ key: 'iso_week', title: 'ISO week' }, ...BREAKDOWN_COLUMNS],
      }),
    ),
    '<h3>Per province</h3>',
    await chartOrNothing(
      'failures-by-province',
      `Failed attempts per province (top ${CHART_TOP})`,
      byProvince.rows,
      horizontalBars({
        description: 'Failed attempts per province',
        rows: chartRows(byProvince.rows.slice(0, CHART_TOP), { province: place, failures: (r) => Number(r.failures) }),
        category: 'province',
        categoryTitle: 'province',
        value: 'failures',
        valueTitle: 'failed attempts',
      }),
    ),
    scrolling(
      htmlTable({
        name: 'failures-by-province',
        rows: byProvince.rows,
        total: byProvince.total,
        columns: [{ key: 'province_name', title: 'province' }, ...BREAKDOWN_COLUMNS],
      }),
    ),
    '<h3>Per post office</h3>',
    await chartOrNothing(
      'failures-by-post-office',
      `Failed attempts per post office (top ${CHART_TOP})`,
      byPostOffice.rows,
      horizontalBars({
        description: 'Failed attempts per post office',
        rows: chartRows(byPostOffice.rows.slice(0, CHART_TOP), {
          office: (r) => `${r.post_office_name ?? '(unknown)'}, ${place(r)}`,
          failures: (r) => Number(r.failures),
        }),
        category: 'office',
        categoryTitle: 'post office',
        value: 'failures',
        valueTitle: 'failed attempts',
      }),
    ),
    scrolling(
      htmlTable({
        name: 'failures-by-post-office',
        rows: byPostOffice.rows,
        total: byPostOffice.total,
        columns: [
          { key: 'post_office_name', title: 'post office' },
          { key: 'province_name', title: 'province' },
          ...BREAKDOWN_COLUMNS,
        ],
      }),
    ),
  ].join('\n');
  const waiting = [
    figures([
      {
        name: 'awaiting',
        label: 'orders awaiting handling (status 16)',
        value: formatValue(String(awaiting.total), 'count'),
      },
    ]),
    await chartOrNothing(
      'awaiting-by-reason',
      'Orders awaiting handling per last reason',
      awaitingByReason,
      horizontalBars({
        description: 'Orders awaiting handling per last reason',
        rows: chartRows(awaitingByReason, { reason: reasonLabel, orders: (r) => Number(r.orders) }),
        category: 'reason',
        categoryTitle: 'last reason',
        value: 'orders',
        valueTitle: 'orders',
      }),
    ),
    '<h3>Longest waiting</h3>',
    scrolling(
      htmlTable({
        name: 'failures-awaiting',
        rows: awaiting.rows,
        total: awaiting.total,
        columns: [
          { key: 'carrier', title: 'carrier' },
          { key: 'order_code', title: 'order' },
          { key: 'account_alias', title: 'account' },
          { key: 'awaiting_since', title: 'since' },
          { key: 'waited_hours', title: 'hours waited', kind: 'number' },
          { key: 'delay_code', title: 'code' },
          { key: 'delay_meaning', title: 'reason' },
          { key: 'delay_note', title: 'note' },
          { key: 'province_name', title: 'province' },
          { key: 'post_office_name', title: 'post office' },
        ],
      }),
    ),
  ].join('\n');
  return { failures, awaiting: waiting };
}

/**
 * The HTML report: the run summary and quota use, charge findings, delivery failures, orders
 * awaiting handling and the COD check of the payout statements, from the same queries as the CSV reports of the same scope. Runs its
 * statements (temporary tables) on `warehouse`, which may be read-only.
 */
export async function buildHtmlReport(warehouse: Warehouse, options: HtmlReportOptions): Promise<string> {
  const scope: ReportScope = {
    fromDay: options.from,
    toDay: options.to,
    account: options.account,
    carrier: options.carrier,
  };
  const limit = options.rowLimit ?? HTML_ROW_LIMIT;
  const runs = await runsSection(warehouse, options.timeZone, scope);
  const charges = await chargesSection(warehouse, options.timeZone, scope, options.now, limit);
  const { failures, awaiting } = await failuresSections(warehouse, options.timeZone, scope, options.now, limit);
  const cod = await codSection(
    warehouse,
    options.timeZone,
    scope,
    options.now,
    limit,
    options.codRules ?? DEFAULT_COD_RULES,
  );
  const period = `${options.from ?? 'the earliest day'} to ${options.to ?? 'today'} (carrier days, UTC+07:00)`;
  return htmlPage({
    title: `parcel-recon report${options.account === undefined ? '' : `: ${options.account}`}`,
    subtitle: `${period}${options.account === undefined ? ', all accounts' : `, account ${options.account}`}${options.carrier === undefined ? '' : `, carrier ${options.carrier}`}; made ${formatDisplayTime(options.now, options.timeZone)} (times in ${options.timeZone})`,
    sections: [
      { id: 'runs', title: 'Runs and quota', html: runs },
      { id: 'charges', title: 'Charge findings', html: charges },
      { id: 'failures', title: 'Delivery failures', html: failures },
      { id: 'awaiting', title: 'Orders awaiting handling', html: awaiting },
      { id: 'cod', title: 'COD payouts', html: cod },
    ],
  });
}

/** Writes the HTML report to `out` (its folder made when missing); what the command and the nightly job call. */
export async function writeHtmlReport(
  warehouse: Warehouse,
  options: HtmlReportOptions & { readonly out: string },
): Promise<{ path: string; bytes: number }> {
  const html = await buildHtmlReport(warehouse, options);
  await makeFolder(dirname(options.out));
  try {
    await writeFile(options.out, html, 'utf8');
  } catch (error) {
    // No half page is left where a reader would open it.
    await rm(options.out, { force: true });
    throw error;
  }
  return { path: options.out, bytes: Buffer.byteLength(html, 'utf8') };
}

/** What each check of a section compares, for the note above its summary table. */
function checkNotes(checks: readonly { readonly name: string; readonly what: string }[]): string {
  return checks.map((check) => `<b>${escapeHtml(check.name)}</b>: ${escapeHtml(check.what)}.`).join(' ');
}
