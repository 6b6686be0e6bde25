import { join } from 'node:path';
import { carrierDayOf } from '../src/carriers/carrier-time.js';
import { EXIT } from '../src/errors/exit-codes.js';
import { DEFAULT_CHARGE_RULES } from '../src/reports/charges-report.js';
import { writeHtmlReport } from '../src/reports/html/html-report.js';
import type { PartnerRecordsSource } from '../src/reports/partner-records.js';
import { ReconcileRulesSchema } from '../src/reports/reconcile-report.js';
import {
  exportChargesReport,
  exportCodReport,
  exportFailuresReport,
  exportReconcileReport,
  type ReportRequest,
  type ReportSummary,
} from '../src/reports/report-export.js';
import type { JobContext, JobStepResult } from './job-definition.js';

const DAY_MS = 86_400_000;

/** The reports' request for a job run: the configured number of carrier days ending with the run's, in the job's own folder. */
export function jobReportRequest(context: JobContext, job: string): ReportRequest {
  const now = context.now();
  const offset = context.settings.dayUtcOffsetMinutes;
  const { reports } = context.settings;
  return {
    scope: { fromDay: carrierDayOf(now - (reports.periodDays - 1) * DAY_MS, offset), toDay: carrierDayOf(now, offset) },
    now,
    format: reports.format,
    outDir: join(reports.outDir, job),
    timeZone: context.settings.timeZone,
  };
}

function reportStep(step: string, summary: ReportSummary): JobStepResult {
  return {
    step,
    exitState: 'ok',
    exitCode: EXIT.OK,
    summary: { range: summary.range, files: summary.files, findings: summary.lines, figures: summary.figures },
  };
}

export async function chargesStep(
  context: JobContext,
  request: ReportRequest,
  invoices?: PartnerRecordsSource,
): Promise<JobStepResult> {
  return reportStep(
    'charges report',
    await exportChargesReport(context.warehouse, DEFAULT_CHARGE_RULES, request, { invoices }),
  );
}

export async function failuresStep(context: JobContext, request: ReportRequest): Promise<JobStepResult> {
  return reportStep('failures report', await exportFailuresReport(context.warehouse, request));
}

export async function reconcileStep(
  context: JobContext,
  request: ReportRequest,
  partner: PartnerRecordsSource,
): Promise<JobStepResult> {
  return reportStep(
    'reconcile report',
    await exportReconcileReport(context.warehouse, ReconcileRulesSchema.parse({}), partner, request),
  );
}

/**
 * The cod report up to the day of the run, with the configured rules (`cod.unpaidAfterDays`, `cod.moneyTolerance`). Its findings are not limited to the
 * period: COD overdue since before it is still owed.
 */
export async function codStep(context: JobContext, request: ReportRequest): Promise<JobStepResult> {
  const scope = { toDay: request.scope.toDay };
  return reportStep(
    'cod report',
    await exportCodReport(context.warehouse, context.settings.cod, { ...request, scope }),
  );
}

/** The page of the same period (charts, sortable tables), beside the report files. */
export async function htmlPageStep(context: JobContext, request: ReportRequest): Promise<JobStepResult> {
  const { fromDay, toDay } = request.scope;
  const page = await writeHtmlReport(context.warehouse, {
    from: fromDay,
    to: toDay,
    now: request.now,
    timeZone: request.timeZone,
    codRules: context.settings.cod,
    out: join(request.outDir, `report_${fromDay}_${toDay}.html`),
  });
  return {
    step: 'html report',
    exitState: 'ok',
    exitCode: EXIT.OK,
    summary: { range: { from: fromDay, to: toDay }, files: [{ table: 'report', path: page.path, bytes: page.bytes }] },
  };
}
