/**
 * The full charges workbook over a large warehouse: builds a synthetic warehouse of `--orders` orders
 * in SQL (as bench:reports does), then runs `parcel-recon report charges` over all of it as a child
 * process, as a workbook and, to compare, as CSV, each with `--memory-limit`, and measures its wall
 * time and peak memory (the child's maximum resident set, from /usr/bin/time). The workbook's peak is
 * held against `--target-mb`.
 *
 * Prints one JSON line on stdout and a readable line per format on stderr; exits 1 when the
 * workbook's peak passes the target, 2 on a bad flag.
 *
 *   npm run bench:xlsx -- --orders 1000000 --memory-limit 700MB --target-mb 1024
 *
 * `--keep` leaves the folder (warehouse, files) and names it; `--reuse DIR` runs the reports again
 * over that folder's warehouse.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { buildSyntheticWarehouse } from './support/synthetic-warehouse.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../src/cli/main.js');
const TIME = '/usr/bin/time';

function fail(message: string): never {
  process.stderr.write(`xlsx bench: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      orders: { type: 'string', default: '1000000' },
      'target-mb': { type: 'string', default: '1024' },
      'memory-limit': { type: 'string', default: '700MB' },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
    },
  });
  const orders = Number(values.orders);
  const targetMB = Number(values['target-mb']);
  if (!Number.isInteger(orders) || orders <= 0) fail(`--orders: not a positive integer: ${values.orders}`);
  if (!(targetMB > 0)) fail(`--target-mb: not a positive number: ${values['target-mb']}`);
  const dir = values.reuse ?? (await mkdtemp(join(tmpdir(), 'parcel-recon-bench-xlsx-')));
  const dbPath = join(dir, 'recon.duckdb');
  try {
    if (values.reuse === undefined) {
      await buildSyntheticWarehouse(dbPath, orders);
      process.stderr.write(`built a warehouse of ${orders} orders\n`);
    } else if (!existsSync(dbPath)) fail(`--reuse: no warehouse at ${dbPath} (keep one with --keep)`);
    const runs: { format: string; seconds: number; peakRssMB: number; fileMB: number; sheets: string[] }[] = [];
    for (const format of ['xlsx', 'csv']) {
      const out = join(dir, format);
      const args = ['report', 'charges', '--db', dbPath, '--format', format, '--out', out, '--to', '2026-12-31'];
      const [loadAverage] = loadavg();
      const started = performance.now();
      // GNU time prints the child's peak resident set (kB) on the last line of stderr.
      const { stdout, stderr } = await run(
        TIME,
        ['-f', '%M', process.execPath, CLI, ...args, '--memory-limit', values['memory-limit'], '--json'],
        { env: { ...process.env, PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' }, maxBuffer: 64 << 20 },
      );
      const seconds = Math.round((performance.now() - started) / 10) / 100;
      const peakRssMB = Math.round(Number(stderr.trim().split('\n').at(-1)) / 1024);
      const { files } = JSON.parse(stdout) as {
        files: { table: string; path: string; rows: number; sheets?: string[] }[];
      };
      let bytes = 0;
      for (const path of new Set(files.map((f) => f.path))) bytes += (await stat(path)).size;
      const fileMB = Math.round(bytes / 2 ** 20);
      const sheets = files.map(
        (f) => `${f.table} ${f.rows} rows${f.sheets === undefined ? '' : ` (${f.sheets.join(', ')})`}`,
      );
      runs.push({ format, seconds, peakRssMB, fileMB, sheets });
      process.stderr.write(
        `charges ${format}: ${seconds} s, peak ${peakRssMB} MB, ${fileMB} MB of files, load ${loadAverage!.toFixed(1)}; ${sheets.join('; ')}\n`,
      );
    }
    const workbook = runs[0]!;
    process.stdout.write(
      `${JSON.stringify({ orders, memoryLimit: values['memory-limit'], runs, targetMB, machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, loadAverage: loadavg() } })}\n`,
    );
    if (workbook.peakRssMB > targetMB) process.exitCode = 1;
  } finally {
    if (!values.keep && values.reuse === undefined) await rm(dir, { recursive: true, force: true });
    else process.stderr.write(`kept ${dir}\n`);
  }
}

await main();
