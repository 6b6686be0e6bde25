import type { SqlRunner } from '../warehouse/warehouse.js';
import { chargesQuery, chargesSummaryQuery, DEFAULT_CHARGE_RULES } from './charges-report.js';
import {
  awaitingHandlingQuery,
  failuresByPostOfficeQuery,
  failuresByProvinceQuery,
  failuresByReasonQuery,
  failuresByWeekQuery,
  failuresQuery,
  repeatedFailuresQuery,
} from './failures-report.js';
import { carrierRecordsQuery } from './reconcile-report.js';

/**
 * The reports as views, over the whole warehouse with the default rules, built from the same query
 * functions the `report` command runs: what analysts query in SQL is what the files hold.
 */
export const REPORT_VIEWS: readonly { readonly name: string; readonly query: string }[] = [
  { name: 'report_charges', query: chargesQuery(DEFAULT_CHARGE_RULES) },
  { name: 'report_charges_summary', query: chargesSummaryQuery('report_charges') },
  { name: 'report_failures', query: failuresQuery() },
  { name: 'report_failures_by_reason', query: failuresByReasonQuery('report_failures') },
  { name: 'report_failures_by_province', query: failuresByProvinceQuery('report_failures') },
  { name: 'report_failures_by_post_office', query: failuresByPostOfficeQuery('report_failures') },
  { name: 'report_failures_by_week', query: failuresByWeekQuery('report_failures') },
  { name: 'report_failures_repeated', query: repeatedFailuresQuery('report_failures') },
  { name: 'report_failures_awaiting', query: awaitingHandlingQuery('current_timestamp') },
  { name: 'report_carrier_records', query: carrierRecordsQuery() },
];

/** Creates or replaces the report views; run on every writable open, so they follow the program's version. */
export async function installReportViews(sql: SqlRunner): Promise<void> {
  for (const view of REPORT_VIEWS) await sql.run(`CREATE OR REPLACE VIEW ${view.name} AS ${view.query}`);
}
