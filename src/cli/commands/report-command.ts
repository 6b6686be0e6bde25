import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import { KNOWN_CARRIERS } from '../../carriers/known-carriers.js';
import { diskFaultOf } from '../../errors/disk-fault.js';
import { UserError } from '../../errors/user-error.js';
import { ChargeRulesSchema } from '../../reports/charges-report.js';
import { writeHtmlReport } from '../../reports/html/html-report.js';
import { PartnerRecordsError, type PartnerRecordsSource, partnerFile } from '../../reports/partner-records.js';
import { ReconcileRulesSchema } from '../../reports/reconcile-report.js';
import {
  exportChargesReport,
  exportCodReport,
  exportFailuresReport,
  exportReconcileReport,
  ORDERS_BY_ORDER_DATE,
  type ReportRequest,
  type ReportSummary,
  settleReportRange,
} from '../../reports/report-export.js';
import { scopeWindow } from '../../reports/report-sql.js';
import { REPORT_FORMATS, type ReportFormat } from '../../reports/writers/report-formats.js';
import { SETTINGS, type Settings } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import type { ResolvedSettings } from '../../settings/resolve-settings.js';
import { knownCarrierId, memoryLimitSchema } from '../../settings/value-types.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { firstLineOf } from '../../warehouse/warehouse-errors.js';
import { codRulesOf, reportCodRules } from '../cod-rules.js';
import { carrierDaySchema, checkFlags } from '../flag-check.js';
import { type QuerySourceFlags, querySourceOf, querySourcesGiven } from '../query-source-flags.js';
import { runClock } from '../run-clock.js';
import { withReading } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

/**
 * Keeps a report of a 10,000,000-order warehouse under 1 GB of memory: past it DuckDB spills to disk,
 * and the reports cut large scopes into parts that fit.
 */
const REPORT_MEMORY_LIMIT = '500MB';

/** The flags every report takes, checked once; every message names the flag. */
const CommonFlagsSchema = z.object({
  snapshot: z.string().min(1).optional(),
  from: carrierDaySchema.optional(),
  to: carrierDaySchema.optional(),
  account: z.string().min(1).optional(),
  carrier: knownCarrierId.optional(),
  format: z.enum(REPORT_FORMATS).default('csv'),
  out: z.string().default('data/reports'),
  json: z.boolean().default(false),
  memoryLimit: memoryLimitSchema('500MB').default(REPORT_MEMORY_LIMIT),
});

type CommonFlags = z.output<typeof CommonFlagsSchema>;

/** The flags of every report, the page included: the warehouse, the range, the account, the summary. */
function withScopeOptions(command: Command): Command {
  return withSettingOptions(command, 'report', SETTINGS)
    .option('--snapshot <dir>', 'read the Parquet snapshot export --to wrote instead of the warehouse')
    .option(
      '--from <YYYY-MM-DD>',
      'first carrier-local day (UTC+07:00) of the range (default: the earliest in the warehouse)',
    )
    .option('--to <YYYY-MM-DD>', 'last carrier-local day of the range (default: today, $PARCEL_RECON_NOW-aware)')
    .option('--account <alias>', 'one account only (one that matches no order is a warning naming the accounts)')
    .option(
      '--carrier <id>',
      `one carrier only (${KNOWN_CARRIERS.map((known) => known.id).join(', ')}); default: every carrier`,
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
  const scope = `${summary.range.from} to ${summary.range.to}${summary.account === null ? '' : `, account ${summary.account}`}${summary.carrier === null ? '' : `, carrier ${summary.carrier}`}`;
  process.stdout.write(`${summary.report} report, ${scope}\n`);
  for (const line of summary.lines) process.stdout.write(`  ${line}\n`);
  for (const file of summary.files) {
    const sheets = file.sheets === undefined ? '' : `, sheet ${file.sheets.join(', ')}`;
    process.stdout.write(`  ${file.path}${sheets}: ${file.rows} rows\n`);
  }
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
  flags: Pick<CommonFlags, 'snapshot' | 'from' | 'to' | 'account' | 'memoryLimit' | 'json'>,
  settings: ResolvedSettings<Settings>,
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
    let warned = false;
    const summary = await withReading(
      settings,
      flags.snapshot,
      {
        memoryLimit: flags.memoryLimit,
        tempDirectory: spillDir,
        directories: outDir === undefined ? [] : [outDir],
        files: partnerFiles,
      },
      WAREHOUSE_BUSY_WAIT_MS,
      async (warehouse) => {
        // Once, though a report over a snapshot an export replaced runs again.
        if (!warned) await warnOfUnknownAccount(warehouse, flags.account);
        warned = true;
        try {
          return await work(warehouse, now);
        } catch (error) {
          if (error instanceof UserError || error instanceof PartnerRecordsError) throw error;
          throw diskFaultOf(error) ?? new UserError(`${report} report failed: ${firstLineOf(error)}`, 'REPORT_FAILED');
        }
      },
      scopeWindow({ fromDay: flags.from, toDay: flags.to }),
    );
    printSummary(summary, flags.json);
  } finally {
    await rm(spillDir, { recursive: true, force: true });
  }
}

/** The export request the flags of a file report name. */
function requestOf(flags: CommonFlags, settings: ResolvedSettings<Settings>, now: number): ReportRequest {
  return {
    scope: { fromDay: flags.from, toDay: flags.to, account: flags.account, carrier: flags.carrier },
    now,
    format: flags.format as ReportFormat,
    outDir: flags.out,
    timeZone: settings.values.timeZone,
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

/**
 * The partner records named by a file flag (`--partner`, `--invoices`; with --sheet), or by
 * --from-duckdb, --from-postgres or --from-mysql with --query; `returning` says what the query returns.
 */
async function partnerSource(
  fileFlag: string,
  file: string | undefined,
  flags: QuerySourceFlags & { sheet?: string },
  returning: string,
): Promise<PartnerRecordsSource | undefined> {
  const given = (file === undefined ? 0 : 1) + querySourcesGiven(flags);
  if (given > 1) throw new UserError(`${fileFlag}, --from-duckdb, --from-postgres and --from-mysql: give one of them`);
  if (flags.sheet !== undefined && file === undefined)
    throw new UserError(`--sheet: names a sheet of the ${fileFlag} workbook`);
  if (file !== undefined) return recordsFile(file, flags.sheet);
  return querySourceOf(flags, process.env, returning);
}

/** The flags that read the partner's records from a query, as `track` reads order codes. */
function withPartnerQueryOptions(command: Command, records: string): Command {
  return command
    .option('--from-duckdb <file>', `read ${records} from a DuckDB file with --query`)
    .option(
      '--from-postgres [url]',
      `read ${records} from PostgreSQL with --query (no password in the URL: PGPASSWORD, ~/.pgpass or $PARCEL_RECON_POSTGRES_URL)`,
    )
    .option(
      '--from-mysql [url]',
      `read ${records} from MySQL or MariaDB with --query (no password in the URL: $${SETTINGS.mysqlPassword.env}, --mysql-password-file or the whole URL in $${SETTINGS.mysqlUrl.env})`,
    )
    .option('--mysql-password-file <file>', "the --from-mysql password, the file's first line (mode 600)")
    .option('--query <sql>', `the query giving ${records}`);
}

function chargesCommand(): Command {
  const command = withCommonOptions(
    new Command('charges').description(
      'Audit the charges the carrier billed: one row per order, a flag per check, and a summary per check and account.',
    ),
  )
    .option(
      '--volumetric-divisor <n>',
      "cal_weight = length x width x height / this, for every carrier (default: each carrier's published divisor)",
    )
    .option(
      '--fuel-share <share>',
      "fuel fee as a share of price, for every carrier (default: each carrier's published share)",
    )
    .option(
      '--vat-share <share>',
      "VAT as a share of price + price_fr + far-region fee + fuel, for every carrier (default: each carrier's published share)",
    )
    .option('--money-tolerance <dong>', 'money differences up to this pass', '1')
    .option('--weight-tolerance <kg>', 'weight differences up to this pass', '0.01')
    .option('--quote-tolerance <dong>', 'how far the total may be from the price quote', '1')
    .option(
      '--invoices <file>',
      "the partner's records (CSV or .xlsx with order_code, invoiced_amount) to compare the totals with",
    )
    .option('--sheet <name>', 'the sheet of an .xlsx --invoices file (default: the first)');
  return withPartnerQueryOptions(command, 'the invoices')
    .option('--flagged-only', 'write only the orders with at least one flag (the summary still covers every order)')
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(CommonFlagsSchema, raw);
      const settings = await loadSettings('report', raw, process.env);
      const divisor = raw.volumetricDivisor === undefined ? {} : { volumetricDivisor: Number(raw.volumetricDivisor) };
      const rules = checkFlags(ChargeRulesSchema, { ...raw, ...divisor });
      const invoices = await partnerSource(
        '--invoices',
        typeof raw.invoices === 'string' ? raw.invoices : undefined,
        raw,
        'order_code and invoiced_amount',
      );
      await runReport(
        'charges',
        flags,
        settings,
        flags.out,
        (warehouse, now) =>
          exportChargesReport(warehouse, rules, requestOf(flags, settings, now), {
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
    const flags = checkFlags(CommonFlagsSchema, raw);
    const settings = await loadSettings('report', raw, process.env);
    await runReport('failures', flags, settings, flags.out, (warehouse, now) =>
      exportFailuresReport(warehouse, requestOf(flags, settings, now)),
    );
  });
}

function codCommand(): Command {
  const command = withCommonOptions(
    new Command('cod').description(
      "Check the carriers' payout statements against the delivered COD orders: unpaid COD, statement arithmetic, fees withheld against the charges billed, COD paid for orders not delivered or twice, return fees without a return.",
    ),
  )
    .option(
      '--partner <file>',
      "the shop's own records (CSV or .xlsx with order_code, cod_amount) to compare the COD with",
    )
    .option('--sheet <name>', 'the sheet of an .xlsx --partner file (default: the first)');
  return withPartnerQueryOptions(withSettingOptions(command, 'report cod', SETTINGS), 'the records').action(
    async (raw: Record<string, unknown>) => {
      const flags = checkFlags(CommonFlagsSchema, raw);
      const settings = await loadSettings('report', raw, process.env);
      const rules = await reportCodRules(raw, process.env);
      const shopRecords = await partnerSource(
        '--partner',
        typeof raw.partner === 'string' ? raw.partner : undefined,
        raw,
        'order_code and cod_amount',
      );
      await runReport(
        'cod',
        flags,
        settings,
        flags.out,
        (warehouse, now) => exportCodReport(warehouse, rules, requestOf(flags, settings, now), shopRecords),
        filesReadByDuckDb(shopRecords),
      );
    },
  );
}

function reconcileCommand(): Command {
  const command = withCommonOptions(
    new Command('reconcile').description(
      "Compare the partner's own records (order_code and any of expected_status, invoiced_amount, cod_amount) with the warehouse.",
    ),
  )
    .option('--partner <file>', "the partner's records as CSV or .xlsx")
    .option('--sheet <name>', 'the sheet of an .xlsx --partner file (default: the first)');
  return withPartnerQueryOptions(command, 'the records')
    .option('--money-tolerance <dong>', 'money differences up to this pass', '1')
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(CommonFlagsSchema, raw);
      const settings = await loadSettings('report', raw, process.env);
      const rules = checkFlags(ReconcileRulesSchema, raw);
      const source = await partnerSource(
        '--partner',
        typeof raw.partner === 'string' ? raw.partner : undefined,
        raw,
        'order_code and any of expected_status, invoiced_amount, cod_amount',
      );
      if (source === undefined)
        throw new UserError(
          'no partner records: give --partner FILE, --from-duckdb FILE --query SQL, --from-postgres URL --query SQL or --from-mysql URL --query SQL',
        );
      await runReport(
        'reconcile',
        flags,
        settings,
        flags.out,
        (warehouse, now) => exportReconcileReport(warehouse, rules, source, requestOf(flags, settings, now)),
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
      const flags = checkFlags(HtmlFlagsSchema, raw);
      const settings = await loadSettings('report', raw, process.env);
      // The page's folder, though DuckDB writes nothing there: a connection given none has its settings
      // locked, and the charges' pass sets one for its own statements.
      await runReport(
        'html',
        flags,
        settings,
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
            carrier: flags.carrier,
            now,
            timeZone: settings.values.timeZone,
            codRules: codRulesOf(settings),
            out,
          });
          return {
            report: 'html',
            range,
            account: flags.account ?? null,
            carrier: flags.carrier ?? null,
            files: [],
            figures: page,
            lines: [`${page.path}: ${page.bytes} bytes`],
          };
        },
      );
    });
}

/** `report charges|failures|reconcile|cod|html`: the finance, operations and reconciliation reports. */
export function reportCommand(): Command {
  const command = new Command('report').description(
    'Write a report (charges, failures, reconcile, cod) as CSV, Parquet, JSON or an Excel workbook and print its summary, or the HTML page of them (html).',
  );
  for (const sub of [chargesCommand(), failuresCommand(), reconcileCommand(), codCommand(), htmlCommand()])
    command.addCommand(sub.exitOverride());
  return command;
}
