/**
 * Report run times over a large warehouse: builds a synthetic warehouse of `--orders` orders in SQL
 * (generate_series: charges that follow the published relations with 1% anomalies, price lines,
 * five statuses each, failed attempts on a third of the orders, quotes for half, a partner CSV of every
 * order; with the cod report, 247Express's payout statements of the delivered COD orders with anomalies
 * planted), then times `parcel-recon report charges|failures|reconcile|cod|html` in each `--formats` as a child
 * process, the way cron runs it (read-only open, files written, summary printed), with its peak memory
 * (the child's maximum resident set, from /usr/bin/time).
 *
 * Prints one JSON line on stdout and a readable line per run on stderr; exits 1 when a report takes
 * more than its target (`--target` seconds; `--month-target` for a month's range), 2 on a bad flag.
 *
 *   npm run bench:reports -- --orders 1000000 --formats csv,parquet,json --target 10
 *   npm run bench:reports -- --orders 1000000 --reports cod --formats csv,parquet --target 10
 *   npm run bench:reports -- --orders 10000000 --history-days 365 --ranges month,all --formats csv --target 30
 *
 * `--history-days N` spreads the orders over N days, codes rising with the accept date; `--ranges`
 * picks `all` (the whole history, to 2026-12-31) and `month`
 * (2026-11-01 to 2026-11-30; reconcile then reads the partner lines of that month's orders). `--keep` leaves the folder (warehouse, partner CSV, files) and names it;
 * `--reuse DIR` runs the reports again over that folder's warehouse without rebuilding it; `--reports`
 * picks reports; `--memory-limit` is passed to each report.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { scopeCondition } from '../src/reports/report-sql.js';
import { sqlText } from '../src/warehouse/sql-literals.js';
import { Warehouse } from '../src/warehouse/warehouse.js';
import { buildSyntheticWarehouse } from './support/synthetic-warehouse.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../src/cli/main.js');
const TIME = '/usr/bin/time';
const REPORTS = ['charges', 'failures', 'reconcile', 'cod', 'html'] as const;
const FORMATS = ['csv', 'parquet', 'json'] as const;
const RANGES = ['all', 'month'] as const;
const MONTH = ['--from', '2026-11-01', '--to', '2026-11-30'];

interface Settings {
  orders: number;
  formats: string[];
  reports: string[];
  target: number;
  monthTarget: number;
  historyDays: number | undefined;
  ranges: string[];
  /** Each report's `--memory-limit`, when given. */
  memoryLimit: string | undefined;
  keep: boolean;
  /** A folder kept by an earlier `--keep` run: its warehouse and partner CSV are reused, not rebuilt. */
  reuse: string | undefined;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      orders: { type: 'string', default: process.env.BENCH_ORDERS ?? '1000000' },
      formats: { type: 'string', default: 'csv,parquet,json' },
      target: { type: 'string', default: '10' },
      'month-target': { type: 'string', default: '3' },
      'history-days': { type: 'string' },
      ranges: { type: 'string', default: 'all' },
      'memory-limit': { type: 'string' },
      reports: { type: 'string', default: 'charges,failures,reconcile' },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
    },
  });
  const orders = Number(values.orders);
  const target = Number(values.target);
  const monthTarget = Number(values['month-target']);
  const historyDays = values['history-days'] === undefined ? undefined : Number(values['history-days']);
  const formats = values.formats.split(',');
  const reports = values.reports.split(',');
  const ranges = values.ranges.split(',');
  if (!Number.isInteger(orders) || orders <= 0) fail(`--orders: not a positive integer: ${values.orders}`);
  if (!(target > 0)) fail(`--target: not a positive number: ${values.target}`);
  if (!(monthTarget > 0)) fail(`--month-target: not a positive number: ${values['month-target']}`);
  if (historyDays !== undefined && !(Number.isInteger(historyDays) && historyDays > 0))
    fail(`--history-days: not a positive integer: ${values['history-days']}`);
  for (const r of ranges)
    if (!(RANGES as readonly string[]).includes(r)) fail(`--ranges: unknown range ${r} (${RANGES.join(', ')})`);
  for (const f of formats)
    if (!(FORMATS as readonly string[]).includes(f)) fail(`--formats: unknown format ${f} (csv, parquet, json)`);
  for (const r of reports)
    if (!(REPORTS as readonly string[]).includes(r)) fail(`--reports: unknown report ${r} (${REPORTS.join(', ')})`);
  return {
    orders,
    formats,
    reports,
    target,
    monthTarget,
    historyDays,
    ranges,
    memoryLimit: values['memory-limit'],
    keep: values.keep,
    reuse: values.reuse,
  };
}

function fail(message: string): never {
  process.stderr.write(`reports bench: ${message}\n`);
  process.exit(2);
}

/**
 * CPU seconds (user + system) of this process's finished children, from /proc/self/stat (Linux; clock
 * ticks of 1/100 s): a report's CPU time says more than its wall time on a machine others load too.
 */
async function childrenCpuSeconds(): Promise<number | undefined> {
  try {
    const stat = await readFile('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * The partner's lines of the orders accepted in the month: what a partner reconciling a month sends,
 * so a month's reconcile reads a month of partner lines, not every order's.
 */
async function writeMonthPartnerCsv(dbPath: string, partnerCsv: string, monthCsv: string): Promise<void> {
  const warehouse = await Warehouse.open(dbPath, { readOnly: true, directories: [dirname(partnerCsv)] });
  try {
    await warehouse.run(
      `COPY (SELECT p.* FROM read_csv(${sqlText(partnerCsv)}, all_varchar = true) AS p
             SEMI JOIN orders AS o ON o.order_code = p.order_code
               AND ${scopeCondition({ fromDay: MONTH[1], toDay: MONTH[3] }, { time: 'o.accept_date', account: 'o.account_alias' })})
       TO ${sqlText(monthCsv)} (FORMAT csv, HEADER)`,
    );
  } finally {
    await warehouse.close();
  }
}

/** The orders of a kept warehouse, which must exist. */
async function ordersIn(dbPath: string): Promise<number> {
  if (!existsSync(dbPath)) fail(`--reuse: no warehouse at ${dbPath} (keep one with --keep)`);
  const warehouse = await Warehouse.open(dbPath, { readOnly: true });
  try {
    const [row] = (await warehouse.readAll('SELECT count(*) AS orders FROM orders')).getRowObjectsJson();
    return Number(row?.orders);
  } finally {
    await warehouse.close();
  }
}

async function main(): Promise<void> {
  const settings = readSettings();
  const dir = settings.reuse ?? (await mkdtemp(join(tmpdir(), 'parcel-recon-bench-reports-')));
  try {
    const dbPath = join(dir, 'recon.duckdb');
    const partnerCsv = join(dir, 'partner.csv');
    const monthPartnerCsv = join(dir, 'partner-month.csv');
    let buildSeconds = 0;
    if (settings.reuse === undefined) {
      const buildStarted = performance.now();
      await buildSyntheticWarehouse(dbPath, settings.orders, partnerCsv, {
        historyDays: settings.historyDays,
        payouts: settings.reports.includes('cod'),
      });
      buildSeconds = (performance.now() - buildStarted) / 1000;
      process.stderr.write(`built a warehouse of ${settings.orders} orders in ${buildSeconds.toFixed(1)} s\n`);
    } else {
      settings.orders = await ordersIn(dbPath);
      process.stderr.write(`reusing the warehouse of ${settings.orders} orders in ${dir}\n`);
    }
    if (settings.ranges.includes('month') && settings.reports.includes('reconcile'))
      await writeMonthPartnerCsv(dbPath, partnerCsv, monthPartnerCsv);
    const runs: {
      report: string;
      range: string;
      format: string;
      seconds: number;
      cpuSeconds: number | null;
      peakRssMB: number;
      loadAverage: number | undefined;
      summary: unknown;
    }[] = [];
    // Each report in each format, and the charges CSV of the flagged orders only (what finance opens in a spreadsheet);
    // the page (html) has one format of its own.
    const variants = settings.reports.flatMap((report) => [
      ...(report === 'html' ? ['html'] : settings.formats).map((format) => ({
        report,
        format,
        extra: report === 'reconcile' ? ['--partner'] : [],
      })),
      ...(report === 'charges' && settings.formats.includes('csv')
        ? [{ report, format: 'csv', extra: ['--flagged-only'] }]
        : []),
    ]);
    for (const range of settings.ranges)
      for (const { report, format, extra } of variants) {
        const days = range === 'month' ? MONTH : ['--to', '2026-12-31'];
        const out =
          report === 'html'
            ? ['--out', join(dir, 'out', 'html', `${range}.html`)]
            : ['--format', format, '--out', join(dir, 'out', format)];
        const partner = extra.includes('--partner') ? [range === 'month' ? monthPartnerCsv : partnerCsv] : [];
        const memory = settings.memoryLimit === undefined ? [] : ['--memory-limit', settings.memoryLimit];
        const args = ['report', report, '--db', dbPath, ...out, '--json', ...days, ...memory, ...extra, ...partner];
        const label = `${report}${extra.includes('--flagged-only') ? ' --flagged-only' : ''}`;
        const [loadAverage] = loadavg();
        const cpuBefore = await childrenCpuSeconds();
        const started = performance.now();
        // GNU time prints the child's peak resident set (kB) on the last line of stderr.
        const { stdout, stderr } = await run(TIME, ['-f', '%M', process.execPath, CLI, ...args], {
          env: { ...process.env, PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' },
          maxBuffer: 64 << 20,
        });
        const seconds = (performance.now() - started) / 1000;
        const cpuAfter = await childrenCpuSeconds();
        const cpuSeconds =
          cpuBefore === undefined || cpuAfter === undefined ? null : Math.round((cpuAfter - cpuBefore) * 100) / 100;
        const peakRssMB = Math.round(Number(stderr.trim().split('\n').at(-1)) / 1024);
        const summary = JSON.parse(stdout) as { files: { table: string; rows: number }[]; figures: { bytes?: number } };
        const files =
          report === 'html'
            ? [`page ${summary.figures.bytes} bytes`]
            : summary.files.map((f) => `${f.table} ${f.rows} rows`);
        runs.push({
          report: label,
          range,
          format,
          seconds: Math.round(seconds * 100) / 100,
          cpuSeconds,
          peakRssMB,
          loadAverage,
          summary: files,
        });
        const cpu = cpuSeconds === null ? '' : `, CPU ${cpuSeconds.toFixed(1)} s`;
        process.stderr.write(
          `${range.padEnd(6)} ${label.padEnd(25)} ${format.padEnd(8)} ${seconds.toFixed(2).padStart(7)} s ${String(peakRssMB).padStart(5)} MB  (load ${loadAverage!.toFixed(1)}${cpu}; ${files.join(', ')})\n`,
        );
      }
    const slowest = Math.max(...runs.map((r) => r.seconds));
    const missed = runs.filter((r) => r.seconds > (r.range === 'month' ? settings.monthTarget : settings.target));
    const machine = {
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: loadavg(),
    };
    process.stdout.write(
      `${JSON.stringify({ orders: settings.orders, historyDays: settings.historyDays ?? null, buildSeconds: Math.round(buildSeconds * 10) / 10, runs, slowest, peakRssMB: Math.max(...runs.map((r) => r.peakRssMB)), target: settings.target, monthTarget: settings.monthTarget, machine })}\n`,
    );
    if (missed.length > 0) process.exitCode = 1;
  } finally {
    if (!settings.keep && settings.reuse === undefined) await rm(dir, { recursive: true, force: true });
    else process.stderr.write(`kept ${dir}\n`);
  }
}

await main();
