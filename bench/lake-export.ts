/**
 * What `export --to` costs as history grows. On synthetic warehouses of the same monthly volume
 * (`--per-month` orders a month, with their charges, statuses, failures, quotes and audit rows) over
 * 12 and over 36 months: the first, full export, then the same night's writes (new orders first
 * seen tonight with their statuses and lookups, and the last two weeks' orders seen again, recorded
 * in the ledger of changed partitions as the product's writers record theirs), then an export. Reported: wall time and peak memory (VmHWM, read from /proc while the export runs) of each
 * export of `bin/parcel-recon export`, and the ratio of the night exports' times, 36 months over 12,
 * measured in this one run; then October's charges report over each snapshot (`report charges
 * --snapshot --from 2026-10-01 --to 2026-10-31`), its ratio likewise: it reads October's partitions,
 * so history adds little. Targets: ratio <= 1.2 (the night's export costs what the night touched,
 * not what the history holds), peak memory < 1 GB for every export.
 *
 *   npm run bench:lake -- [--per-month 50000] [--months 12,36] [--night 20000] [--keep DIR]
 *
 * `--months 120 --per-month 83334` gives the first export of a 10,000,000-order warehouse. Prints one
 * JSON line on stdout and a readable line on stderr; exits 1 when a target is missed, 2 on a bad flag.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { recordChangedRows } from '../src/warehouse/partition-change-ledger.js';
import { Warehouse } from '../src/warehouse/warehouse.js';
import { processPeakMemoryMb } from './support/process-cpu.js';
import { COMMAND_PATH } from './support/sandbox-process.js';
import { buildSyntheticWarehouse } from './support/synthetic-warehouse.js';

const RATIO_TARGET = 1.2;
const MEMORY_TARGET_MB = 1024;
const DAYS_PER_MONTH = 30;
/** A month of every history the bench builds: the last full month before the night. */
const REPORT_MONTH = { from: '2026-10-01', to: '2026-10-31' } as const;

function settings() {
  const { values } = parseArgs({
    options: {
      'per-month': { type: 'string', default: '50000' },
      months: { type: 'string', default: '12,36' },
      night: { type: 'string', default: '20000' },
      keep: { type: 'string' },
    },
  });
  const count = (flag: string, text: string, min: number) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) {
      process.stderr.write(`lake-export: --${flag}: not a whole number of at least ${min}\n`);
      process.exit(2);
    }
    return value;
  };
  return {
    perMonth: count('per-month', values['per-month'], 1),
    months: values.months.split(',').map((months) => count('months', months.trim(), 1)),
    night: count('night', values.night, 1),
    keep: values.keep,
  };
}

interface Measured {
  readonly seconds: number;
  readonly peakMemoryMb: number;
  readonly partitionsWritten: number;
  readonly partitionsKept: number;
}

/** Runs parcel-recon with `args` as cron would, reading its peak memory until it ends; its stdout. */
async function measuredRun(
  args: readonly string[],
): Promise<{ seconds: number; peakMemoryMb: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(COMMAND_PATH, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  let peakMemoryMb = 0;
  const poll = setInterval(() => {
    // The process and its high-water mark go together: the last reading before it ends is its peak.
    processPeakMemoryMb(child.pid!)
      .then((mb) => {
        if (Number.isFinite(mb)) peakMemoryMb = Math.max(peakMemoryMb, mb);
      })
      .catch(() => undefined);
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${args[0]} exited ${code}: ${stderr.trim()}`);
  return { seconds: Math.round(seconds * 100) / 100, peakMemoryMb, stdout };
}

/** Runs `export --to lake --db db --json`. */
async function exportOnce(db: string, lake: string): Promise<Measured> {
  const { seconds, peakMemoryMb, stdout } = await measuredRun(['export', '--to', lake, '--db', db, '--json']);
  const summary = JSON.parse(stdout) as { partitionsWritten: number; partitionsKept: number };
  return {
    seconds,
    peakMemoryMb,
    partitionsWritten: summary.partitionsWritten,
    partitionsKept: summary.partitionsKept,
  };
}

/** The charges report of the month before the night over the snapshot, as finance runs it. */
async function monthReportOnce(lake: string, out: string): Promise<{ seconds: number; peakMemoryMb: number }> {
  const { seconds, peakMemoryMb } = await measuredRun([
    'report',
    'charges',
    '--snapshot',
    lake,
    '--from',
    REPORT_MONTH.from,
    '--to',
    REPORT_MONTH.to,
    '--out',
    out,
    '--json',
  ]);
  return { seconds, peakMemoryMb };
}

/**
 * The same night in every warehouse: `night` orders first seen tonight (copies of the newest orders
 * under new codes) with their five statuses and a lookup each, and the orders of the last two weeks
 * seen again by tonight's run.
 */
async function writeNight(db: string, night: number): Promise<void> {
  const tonight = "TIMESTAMPTZ '2026-11-30 02:00:00+07'";
  const warehouse = await Warehouse.open(db);
  try {
    await warehouse.transaction(async (sql) => {
      await sql.run(`INSERT INTO runs (run_id, job, source, started_at, finished_at, carrier_day, exit_code, exit_state)
        VALUES ('night', 'nightly', 'csv', ${tonight}, ${tonight} + INTERVAL 1 HOUR, DATE '2026-11-30', 0, 'ok')`);
      await sql.run(`CREATE TEMP TABLE night_orders AS
        SELECT * REPLACE ('NIGHT' || lpad(CAST(n AS VARCHAR), 9, '0') AS order_code, ${tonight} AS first_seen_at,
                          ${tonight} AS last_seen_at, 'night' AS last_run_id, ${tonight} AS accept_date)
        FROM (SELECT *, row_number() OVER () AS n FROM (SELECT * FROM orders ORDER BY first_seen_at DESC LIMIT ${night}))`);
      await sql.run('INSERT INTO orders SELECT * EXCLUDE (n) FROM night_orders');
      await sql.run(`INSERT INTO order_statuses
        SELECT carrier, order_code, k, ${tonight} + to_minutes(k), '2' || k, NULL, NULL, 'Hà Nội', 'Bưu cục 1'
        FROM night_orders, range(1, 6) AS r(k)`);
      await sql.run(`UPDATE orders SET last_seen_at = ${tonight}, last_run_id = 'night'
        WHERE first_seen_at >= ${tonight} - INTERVAL 14 DAY AND last_run_id <> 'night'`);
      await sql.run(`INSERT INTO lookup_results
        SELECT carrier, 'night', order_code, account_alias, 'ok', NULL, NULL, 1, 'nightly.csv', ${tonight}
        FROM orders WHERE last_run_id = 'night'`);
      // As the product's writers do, in the same transaction: the partitions the night changed.
      await recordChangedRows(sql, 'orders', "SELECT * FROM orders WHERE last_run_id = 'night'");
      await recordChangedRows(sql, 'order_statuses', `SELECT carrier, ${tonight} AS "time" FROM night_orders`);
      await recordChangedRows(sql, 'lookup_results', "SELECT * FROM lookup_results WHERE run_id = 'night'");
      await sql.run('DROP TABLE night_orders');
    });
    await warehouse.run('CHECKPOINT');
  } finally {
    await warehouse.close();
  }
}

async function main(): Promise<void> {
  const s = settings();
  const dir = s.keep ?? (await mkdtemp(join(tmpdir(), 'parcel-recon-lake-')));
  try {
    const runs: {
      months: number;
      orders: number;
      full: Measured;
      night: Measured;
      monthReport: { seconds: number; peakMemoryMb: number };
    }[] = [];
    for (const months of s.months) {
      const db = join(dir, `lake-${months}.duckdb`);
      const lake = join(dir, `lake-${months}`);
      await rm(db, { force: true });
      await rm(lake, { recursive: true, force: true });
      const orders = months * s.perMonth;
      await buildSyntheticWarehouse(db, orders, undefined, { historyDays: months * DAYS_PER_MONTH });
      const full = await exportOnce(db, lake);
      await writeNight(db, s.night);
      const night = await exportOnce(db, lake);
      const monthReport = await monthReportOnce(lake, join(dir, `report-${months}`));
      runs.push({ months, orders, full, night, monthReport });
      process.stderr.write(
        `lake-export: ${months} months, ${orders} orders: full ${full.seconds} s ${full.peakMemoryMb} MB; ` +
          `after the night ${night.seconds} s ${night.peakMemoryMb} MB (${night.partitionsWritten} partitions written, ${night.partitionsKept} kept); ` +
          `${REPORT_MONTH.from.slice(0, 7)}'s charges report over the snapshot ${monthReport.seconds} s ${monthReport.peakMemoryMb} MB\n`,
      );
    }
    const shortest = runs[0]!;
    const longest = runs[runs.length - 1]!;
    const ratio = Math.round((longest.night.seconds / shortest.night.seconds) * 100) / 100;
    const monthReportRatio = Math.round((longest.monthReport.seconds / shortest.monthReport.seconds) * 100) / 100;
    const peakMemoryMb = Math.max(...runs.flatMap((run) => [run.full.peakMemoryMb, run.night.peakMemoryMb]));
    const passed = (runs.length < 2 || ratio <= RATIO_TARGET) && peakMemoryMb < MEMORY_TARGET_MB;
    process.stdout.write(
      `${JSON.stringify({ bench: 'lake-export', perMonth: s.perMonth, night: s.night, runs, ratio, monthReportRatio, peakMemoryMb, target: `ratio <= ${RATIO_TARGET}, peak < ${MEMORY_TARGET_MB} MB`, passed })}\n`,
    );
    process.stderr.write(
      `lake-export: night export ${longest.months} / ${shortest.months} months ${ratio} (target <= ${RATIO_TARGET}), a month's report ${monthReportRatio}, peak ${peakMemoryMb} MB (target < ${MEMORY_TARGET_MB}): ${passed ? 'meets' : 'MISSES'} them\n`,
    );
    if (!passed) process.exitCode = 1;
  } finally {
    if (s.keep === undefined) await rm(dir, { recursive: true, force: true });
  }
}

await main();
