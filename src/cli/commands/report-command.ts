import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import { describeIssues } from '../../carrier/contract.js';
import { diskFaultOf } from '../../errors/disk-fault.js';
import { UserError } from '../../errors/user-error.js';
import { ChargeRulesSchema } from '../../reports/charges-report.js';
import { DEFAULT_DISPLAY_TIME_ZONE } from '../../reports/display-time.js';
import { writeHtmlReport } from '../../reports/html/html-report.js';
import { PartnerRecordsError, type PartnerRecordsSource, partnerFile } from '../../reports/partner-records.js';
import { ReconcileRulesSchema } from '../../reports/reconcile-report.js';
import {
  exportChargesReport,
  exportFailuresReport,
  exportReconcileReport,
  ORDERS_BY_ORDER_DATE,
  type ReportRequest,
  type ReportSummary,
  settleReportRange,
} from '../../reports/report-export.js';
import { REPORT_FORMATS, type ReportFormat } from '../../reports/writers/report-writer.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { firstLineOf } from '../../warehouse/warehouse-errors.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../callback-journal-config.js';
import { displayTimeZone, TIME_ZONE_ENV } from '../display-time-zone.js';
import { carrierDaySchema } from '../flag-check.js';
import { postgresUrl } from '../postgres-source-config.js';
import { runClock } from '../run-clock.js';
import { memoryLimitSchema } from '../tracking-memory.js';
import { openForReading } from '../warehouse-access.js';
import { DB_ENV, DEFAULT_DB } from '../warehouse-location.js';

/**
 * Keeps a report of a 10,000,000-order warehouse under 1 GB of memory: past it DuckDB spills to disk,
 * and the reports cut large scopes into parts that fit.
 */
const REPORT_MEMORY_LIMIT = '500MB';

/** The flags every report takes, checked once; every message names the flag. */
const CommonFlagsSchema = z.object({
  db: z.string().optional(),
  snapshot: z.string().min(1).optional(),
  from: carrierDaySchema.optional(),
  to: carrierDaySchema.optional(),
  account: z.string().min(1).optional(),
  format: z.enum(REPORT_FORMATS).default('csv'),
  out: z.string().default('data/reports'),
  json: z.boolean().default(false),
  memoryLimit: memoryLimitSchema('500MB').default(REPORT_MEMORY_LIMIT),
  timeZone: z.string().min(1).optional(),
});

type CommonFlags = z.output<typeof CommonFlagsSchema>;

function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function checked<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const key = issue.path[0];
  throw new UserError(
    key === undefined ? describeIssues(result.error.issues, 'options') : `${flagName(String(key))}: ${issue.message}`,
  );
}

/** The flags of every report, the page included: the warehouse, the range, the account, the summary. */
function withScopeOptions(command: Command): Command {
  return command
    .option('--db <file>', `the warehouse (default: $${DB_ENV} or ${DEFAULT_DB}); opened read-only`)
    .option('--snapshot <dir>', 'read the Parquet snapshot export --to wrote instead of the warehouse')
    .option(
      '--from <YYYY-MM-DD>',
      'first carrier-local day (UTC+07:00) of the range (default: the earliest in the warehouse)',
    )
    .option('--to <YYYY-MM-DD>', 'last carrier-local day of the range (default: today, $PARCEL_RECON_NOW-aware)')
    .option('--account <alias>', 'one account only (one that matches no order is a warning naming the accounts)')
    .option(
      '--time-zone <zone>',
      `the IANA time zone times are shown in (default: $${TIME_ZONE_ENV} or ${DEFAULT_DISPLAY_TIME_ZONE})`,
    )
    .option('--json', 'print the summary as JSON')
    .option(
      '--memory-limit <size>',
      `DuckDB's memory_limit for the report (past it DuckDB spills to a temporary directory)`,
      REPORT_MEMORY_LIMIT,
    );
}

function withCommonOptions(command: Command): Command {
  return withScopeOptions(command)
    .addOption(new Option('--format <format>', 'output format').choices([...REPORT_FORMATS]).default('csv'))
    .option('--out <dir>', 'directory the files go to', 'data/reports');
}

function printSummary(summary: ReportSummary, json: boolean): void {
  if (json) {
    const { lines: _lines, ...rest } = summary;
    process.stdout.write(`${JSON.stringify(rest)}\n`);
    return;
  }
  const scope = `${summary.range.from} to ${summary.range.to}${summary.account === null ? '' : `, account ${summary.account}`}`;
  process.stdout.write(`${summary.report} report, ${scope}\n`);
  for (const line of summary.lines) process.stdout.write(`  ${line}\n`);
  for (const file of summary.files) {
    const sheets = file.sheets === undefined ? '' : `, sheet ${file.sheets.join(', ')}`;
    process.stdout.write(`  ${file.path}${sheets}: ${file.rows} rows\n`);
  }
}

/** The time zone the flags and the environment set for the report's times. */
function timeZoneOf(flags: Pick<CommonFlags, 'timeZone'>): string {
  return displayTimeZone([
    [flags.timeZone, '--time-zone'],
    [process.env[TIME_ZONE_ENV], TIME_ZONE_ENV],
  ]);
}

/**
 * A warning (the report still runs, empty, and exits as it would) when `account` matches no order:
 * a misspelt alias would otherwise give an empty report with no word. It names the accounts there are.
 */
async function warnOfUnknownAccount(warehouse: Warehouse, account: string | undefined): Promise<void> {
  if (account === undefined) return;
  const reader = await warehouse.readAll(
    'SELECT DISTINCT account_alias FROM orders WHERE account_alias IS NOT NULL ORDER BY account_alias',
  );
  const accounts = (reader.getColumnsJS()[0] ?? []).map(String);
  if (accounts.includes(account)) return;
  process.stderr.write(
    `parcel-recon: warning: --account ${account} matches no order; the warehouse's accounts: ${accounts.join(', ') || '(none)'}\n`,
  );
}

/**
 * Opens the warehouse read-only with a spill directory, runs the report and prints its summary; a
 * query the warehouse cannot run is one line, exit 1. DuckDB reads and writes no file but the
 * warehouse and `outDir`: the file reports' folder, where it writes their Parquet and JSON, or the
 * HTML page's, which this program writes itself. It also reads `partnerFiles`, a partner's CSV.
 */
async function runReport(
  report: string,
  flags: Pick<CommonFlags, 'db' | 'snapshot' | 'from' | 'to' | 'account' | 'memoryLimit' | 'json'>,
  outDir: string | undefined,
  work: (warehouse: Warehouse, now: number) => Promise<ReportSummary>,
  partnerFiles: readonly string[] = [],
): Promise<void> {
  const now = runClock(process.env)();
  if (flags.from !== undefined && flags.to !== undefined && flags.from > flags.to)
    throw new UserError('--from: after --to');
  // A read-only warehouse gets no spill directory of its own; temporary tables past the limit go here.
  const spillDir = await mkdtemp(join(tmpdir(), 'parcel-recon-report-'));
  try {
    const warehouse = await openForReading(
      flags,
      process.env[DB_ENV] ?? DEFAULT_DB,
      {
        memoryLimit: flags.memoryLimit,
        tempDirectory: spillDir,
        directories: outDir === undefined ? [] : [outDir],
        files: partnerFiles,
      },
      WAREHOUSE_BUSY_WAIT_MS,
    );
    try {
      await warnOfUnknownAccount(warehouse, flags.account);
      let summary: ReportSummary;
      try {
        summary = await work(warehouse, now);
      } catch (error) {
        if (error instanceof UserError || error instanceof PartnerRecordsError) throw error;
        throw diskFaultOf(error) ?? new UserError(`${report} report failed: ${firstLineOf(error)}`, 'REPORT_FAILED');
      }
      printSummary(summary, flags.json);
    } finally {
      await warehouse.close();
    }
  } finally {
    await rm(spillDir, { recursive: true, force: true });
  }
}

/** The export request the flags of a file report name. */
function requestOf(flags: CommonFlags, now: number): ReportRequest {
  return {
    scope: { fromDay: flags.from, toDay: flags.to, account: flags.account },
    now,
    format: flags.format as ReportFormat,
    outDir: flags.out,
    timeZone: timeZoneOf(flags),
  };
}

/** The partner file DuckDB reads itself, a CSV: the one file a confined report opens besides its own. */
function filesReadByDuckDb(source: PartnerRecordsSource | undefined): string[] {
  return source?.kind === 'csv' ? [source.file] : [];
}

/** The records of a file flag (`--partner`, `--invoices`): a `.xlsx` file's first sheet or `--sheet`, else a CSV. */
function recordsFile(file: string, sheet: string | undefined): PartnerRecordsSource {
  const source = partnerFile(file, sheet);
  if (sheet !== undefined && source.kind !== 'xlsx') throw new UserError(`--sheet: ${file} is not a .xlsx workbook`);
  return source;
}

/** The partner records named by --partner (and --sheet), or --from-duckdb / --from-postgres with --query. */
function partnerSource(flags: {
  partner?: string;
  sheet?: string;
  fromDuckdb?: string;
  fromPostgres?: string | true;
  query?: string;
}): PartnerRecordsSource | undefined {
  const given = [flags.partner, flags.fromDuckdb, flags.fromPostgres].filter((f) => f !== undefined).length;
  if (given > 1) throw new UserError('--partner, --from-duckdb and --from-postgres: give one of them');
  if (flags.sheet !== undefined && flags.partner === undefined)
    throw new UserError('--sheet: names a sheet of the --partner workbook');
  if (flags.partner !== undefined) return recordsFile(flags.partner, flags.sheet);
  if (flags.fromDuckdb !== undefined) {
    if (flags.query === undefined)
      throw new UserError(
        '--from-duckdb needs --query SQL returning order_code and any of expected_status, invoiced_amount, cod_amount',
      );
    return { kind: 'duckdb', file: flags.fromDuckdb, query: flags.query };
  }
  if (flags.fromPostgres !== undefined) {
    if (flags.query === undefined)
      throw new UserError(
        '--from-postgres needs --query SQL returning order_code and any of expected_status, invoiced_amount, cod_amount',
      );
    return { kind: 'postgres', url: postgresUrl(flags.fromPostgres, process.env), query: flags.query };
  }
  return undefined;
}

function chargesCommand(): Command {
  return withCommonOptions(
    new Command('charges').description(
      'Audit the charges the carrier billed: one row per order, a flag per check, and a summary per check and account.',
    ),
  )
    .option('--volumetric-divisor <n>', 'cal_weight = length x width x height / this', '6000')
    .option('--fuel-share <share>', 'fuel fee as a share of price', '0.2')
    .option('--vat-share <share>', 'VAT as a share of price + price_fr + far-region fee + fuel', '0.1')
    .option('--money-tolerance <dong>', 'money differences up to this pass', '1')
    .option('--weight-tolerance <kg>', 'weight differences up to this pass', '0.01')
    .option('--quote-tolerance <dong>', 'how far the total may be from the price quote', '1')
    .option(
      '--invoices <file>',
      "the partner's records (CSV or .xlsx with order_code, invoiced_amount) to compare the totals with",
    )
    .option('--sheet <name>', 'the sheet of an .xlsx --invoices file (default: the first)')
    .option('--flagged-only', 'write only the orders with at least one flag (the summary still covers every order)')
    .action(async (raw: Record<string, unknown>) => {
      const flags = checked(CommonFlagsSchema, raw);
      const rules = checked(ChargeRulesSchema, { ...raw, volumetricDivisor: Number(raw.volumetricDivisor) });
      const sheet = typeof raw.sheet === 'string' ? raw.sheet : undefined;
      if (sheet !== undefined && typeof raw.invoices !== 'string')
        throw new UserError('--sheet: names a sheet of the --invoices workbook');
      const invoices = typeof raw.invoices === 'string' ? recordsFile(raw.invoices, sheet) : undefined;
      await runReport(
        'charges',
        flags,
        flags.out,
        (warehouse, now) =>
          exportChargesReport(warehouse, rules, requestOf(flags, now), {
            invoices,
            flaggedOnly: raw.flaggedOnly === true,
          }),
        filesReadByDuckDb(invoices),
      );
    });
}

function failuresCommand(): Command {
  return withCommonOptions(
    new Command('failures').description(
      'Failed delivery attempts: per reason, province, post office and week; repeated failures; orders awaiting handling.',
    ),
  ).action(async (raw: Record<string, unknown>) => {
    const flags = checked(CommonFlagsSchema, raw);
    await runReport('failures', flags, flags.out, (warehouse, now) =>
      exportFailuresReport(warehouse, requestOf(flags, now)),
    );
  });
}

function reconcileCommand(): Command {
  return withCommonOptions(
    new Command('reconcile').description(
      "Compare the partner's own records (order_code and any of expected_status, invoiced_amount, cod_amount) with the warehouse.",
    ),
  )
    .option('--partner <file>', "the partner's records as CSV or .xlsx")
    .option('--sheet <name>', 'the sheet of an .xlsx --partner file (default: the first)')
    .option('--from-duckdb <file>', 'read them from a DuckDB file with --query')
    .option(
      '--from-postgres [url]',
      'read them from PostgreSQL with --query (no password in the URL: PGPASSWORD, ~/.pgpass or $PARCEL_RECON_POSTGRES_URL)',
    )
    .option('--query <sql>', 'the query giving the records')
    .option('--money-tolerance <dong>', 'money differences up to this pass', '1')
    .action(async (raw: Record<string, unknown>) => {
      const flags = checked(CommonFlagsSchema, raw);
      const rules = checked(ReconcileRulesSchema, raw);
      const source = partnerSource(raw as Parameters<typeof partnerSource>[0]);
      if (source === undefined)
        throw new UserError(
          'no partner records: give --partner FILE, --from-duckdb FILE --query SQL or --from-postgres URL --query SQL',
        );
      await runReport(
        'reconcile',
        flags,
        flags.out,
        (warehouse, now) => exportReconcileReport(warehouse, rules, source, requestOf(flags, now)),
        filesReadByDuckDb(source),
      );
    });
}

const HtmlFlagsSchema = CommonFlagsSchema.omit({ format: true, out: true }).extend({
  out: z.string().min(1).optional(),
});

/** Where `report html` writes its page when --out does not say. */
const HTML_DIR = 'data/reports';

function htmlCommand(): Command {
  return withScopeOptions(
    new Command('html').description(
      'Write one self-contained HTML page (charts, sortable tables, nothing fetched): runs and quota, charge findings, delivery failures, orders awaiting handling.',
    ),
  )
    .option('--out <file>', 'the page (default: data/reports/report_<from>_<to>.html)')
    .action(async (raw: Record<string, unknown>) => {
      const flags = checked(HtmlFlagsSchema, raw);
      // The page's folder, though DuckDB writes nothing there: a connection given none has its settings
      // locked, and the charges' pass sets one for its own statements.
      await runReport(
        'html',
        flags,
        flags.out === undefined ? HTML_DIR : dirname(flags.out),
        async (warehouse, now) => {
          const range = await settleReportRange(
            warehouse,
            { fromDay: flags.from, toDay: flags.to },
            now,
            ORDERS_BY_ORDER_DATE,
          );
          const out = flags.out ?? join(HTML_DIR, `report_${range.from}_${range.to}.html`);
          const page = await writeHtmlReport(warehouse, {
            from: flags.from,
            to: flags.to,
            account: flags.account,
            now,
            timeZone: timeZoneOf(flags),
            out,
          });
          return {
            report: 'html',
            range,
            account: flags.account ?? null,
            files: [],
            figures: page,
            lines: [`${page.path}: ${page.bytes} bytes`],
          };
        },
      );
    });
}

/** `report charges|failures|reconcile|html`: the finance, operations and reconciliation reports. */
export function reportCommand(): Command {
  const command = new Command('report').description(
    'Write a report (charges, failures, reconcile) as CSV, Parquet, JSON or an Excel workbook and print its summary, or the HTML page of them (html).',
  );
  for (const sub of [chargesCommand(), failuresCommand(), reconcileCommand(), htmlCommand()])
    command.addCommand(sub.exitOverride());
  return command;
}
