/**
 * Report run times over a large warehouse: builds a synthetic warehouse of `--orders` orders in SQL
 * (generate_series: charges that follow the published relations with 1% anomalies, price lines,
 * five statuses each, failed attempts on a third of the orders, quotes for half, a partner CSV of every
 * order), then times `parcel-recon report charges|failures|reconcile` in each `--formats` as a child
 * process, the way cron runs it (read-only open, files written, summary printed).
 *
 * Prints one JSON line on stdout and a readable line per run on stderr; exits 1 when a report takes
 * more than `--target` seconds, 2 on a bad flag.
 *
 *   npm run bench:reports -- --orders 1000000 --formats csv,parquet,json --target 10
 *
 * `--keep` leaves the folder (warehouse, partner CSV, files) and names it; `--reuse DIR` runs the
 * reports again over that folder's warehouse without rebuilding it; `--reports` picks reports.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Warehouse } from '../src/warehouse/warehouse.js';
import { buildSyntheticWarehouse } from './support/synthetic-warehouse.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../src/cli/main.js');
const REPORTS = ['charges', 'failures', 'reconcile'] as const;
const FORMATS = ['csv', 'parquet', 'json'] as const;

interface Settings {
  orders: number;
  formats: string[];
  reports: string[];
  target: number;
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
      reports: { type: 'string', default: REPORTS.join(',') },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
    },
  });
  const orders = Number(values.orders);
  const target = Number(values.target);
  const formats = values.formats.split(',');
  const reports = values.reports.split(',');
  if (!Number.isInteger(orders) || orders <= 0) fail(`--orders: not a positive integer: ${values.orders}`);
  if (!(target > 0)) fail(`--target: not a positive number: ${values.target}`);
  for (const f of formats)
    if (!(FORMATS as readonly string[]).includes(f)) fail(`--formats: unknown format ${f} (csv, parquet, json)`);
  for (const r of reports)
    if (!(REPORTS as readonly string[]).includes(r)) fail(`--reports: unknown report ${r} (${REPORTS.join(', ')})`);
  return { orders, formats, reports, target, keep: values.keep, reuse: values.reuse };
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
    let buildSeconds = 0;
    if (settings.reuse === undefined) {
      const buildStarted = performance.now();
      await buildSyntheticWarehouse(dbPath, settings.orders, partnerCsv);
      buildSeconds = (performance.now() - buildStarted) / 1000;
      process.stderr.write(`built a warehouse of ${settings.orders} orders in ${buildSeconds.toFixed(1)} s\n`);
    } else {
      settings.orders = await ordersIn(dbPath);
      process.stderr.write(`reusing the warehouse of ${settings.orders} orders in ${dir}\n`);
    }
    const runs: {
      report: string;
      format: string;
      seconds: number;
      cpuSeconds: number | null;
      loadAverage: number | undefined;
      summary: unknown;
    }[] = [];
    // Each report in each format, and the charges CSV of the flagged orders only (what finance opens in a spreadsheet).
    const variants = settings.reports.flatMap((report) => [
      ...settings.formats.map((format) => ({
        report,
        format,
        extra: report === 'reconcile' ? ['--partner', partnerCsv] : [],
      })),
      ...(report === 'charges' && settings.formats.includes('csv')
        ? [{ report, format: 'csv', extra: ['--flagged-only'] }]
        : []),
    ]);
    for (const { report, format, extra } of variants) {
      const args = [
        'report',
        report,
        '--db',
        dbPath,
        '--format',
        format,
        '--out',
        join(dir, 'out', format),
        '--json',
        '--from',
        '2026-10-01',
        '--to',
        '2026-12-31',
        ...extra,
      ];
      const label = `${report}${extra.includes('--flagged-only') ? ' --flagged-only' : ''}`;
      const [loadAverage] = loadavg();
      const cpuBefore = await childrenCpuSeconds();
      const started = performance.now();
      const { stdout } = await run(process.execPath, [CLI, ...args], {
        env: { ...process.env, PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' },
        maxBuffer: 64 << 20,
      });
      const seconds = (performance.now() - started) / 1000;
      const cpuAfter = await childrenCpuSeconds();
      const cpuSeconds =
        cpuBefore === undefined || cpuAfter === undefined ? null : Math.round((cpuAfter - cpuBefore) * 100) / 100;
      const summary = JSON.parse(stdout) as { files: { table: string; rows: number }[] };
      runs.push({
        report: label,
        format,
        seconds: Math.round(seconds * 100) / 100,
        cpuSeconds,
        loadAverage,
        summary: summary.files.map((f) => `${f.table} ${f.rows}`),
      });
      const cpu = cpuSeconds === null ? '' : `, CPU ${cpuSeconds.toFixed(1)} s`;
      process.stderr.write(
        `${label.padEnd(25)} ${format.padEnd(8)} ${seconds.toFixed(2).padStart(7)} s  (load ${loadAverage!.toFixed(1)}${cpu}; ${summary.files.map((f) => `${f.table} ${f.rows} rows`).join(', ')})\n`,
      );
    }
    const slowest = Math.max(...runs.map((r) => r.seconds));
    const machine = {
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: loadavg(),
    };
    process.stdout.write(
      `${JSON.stringify({ orders: settings.orders, buildSeconds: Math.round(buildSeconds * 10) / 10, runs, slowest, target: settings.target, machine })}\n`,
    );
    if (slowest > settings.target) process.exitCode = 1;
  } finally {
    if (!settings.keep && settings.reuse === undefined) await rm(dir, { recursive: true, force: true });
    else process.stderr.write(`kept ${dir}\n`);
  }
}

await main();
