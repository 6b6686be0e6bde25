/**
 * What a night costs as the warehouse grows, and how fast it grows. Two scenarios:
 *
 *   night  the same night (30,000 sandbox codes, half of them stored by an earlier night, half new)
 *          tracked by `parcel-recon track` (bin/parcel-recon, as cron starts it) into synthetic
 *          warehouses of 0, 1,000,000 and 10,000,000 stored orders with a year of `lookup_results`
 *          history: wall time and peak memory (max RSS, the summary's peakMemoryMb) of each night.
 *          Target: the largest warehouse's night within 1.15 times the empty one's, peak memory
 *          under 300 MB. The nights' CPU time (user and system, on Linux) and its ratio are printed
 *          beside them: on a shared machine the wall times move with the other load, the CPU times little.
 *   month  30 nights tracked into an empty warehouse, each night half the codes of the night before
 *          and as many new ones: bytes stored per lookup and per order, in the warehouse file and in
 *          the raw spool, and what a year at 200,000 lookups a night comes to at that rate.
 *
 *   npm run bench:growth -- [--scenario night|month] [--sizes 0,1000000,10000000] [--codes 30000]
 *                           [--rounds 1] [--nights 30] [--cache-dir DIR]
 *
 * The synthetic warehouses are built once per size into a temporary folder (or `--cache-dir`, kept
 * for the next run) and each night runs on a copy. Nights of all sizes run in turn, `--rounds` times,
 * and the best time of each size counts: the machine's other load shifts all of them alike. Prints
 * one JSON line on stdout and a readable line on stderr; exits 1 when a target is missed, 2 on a bad flag.
 */

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { dataFolder } from '../src/warehouse/data-folder.js';
import {
  COMMAND_PATH,
  type ListeningLine,
  startSandboxProcess,
  stopSandboxProcess,
} from './support/sandbox-process.js';
import { buildSyntheticWarehouse } from './support/synthetic-warehouse.js';

/** The carrier day before the sandbox's start day: the last night of the synthetic history. */
const LAST_HISTORY_NIGHT = '2026-11-19';
const HISTORY_NIGHTS = 365;
/** Each synthetic night looked up this share of the stored orders. */
const HISTORY_SHARE_PER_NIGHT = 100;
const YEAR_NIGHTS = 365;
const YEAR_LOOKUPS_PER_NIGHT = 200_000;
const ACCOUNTS = 3;
const RATIO_TARGET = 1.15;
const MEMORY_TARGET_MB = 300;

function settings() {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'night' },
      sizes: { type: 'string', default: '0,1000000,10000000' },
      codes: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      nights: { type: 'string', default: '30' },
      'cache-dir': { type: 'string' },
    },
  });
  const fail = (message: string): never => {
    process.stderr.write(`growth: ${message}\n`);
    process.exit(2);
  };
  const count = (flag: string, text: string, min: number) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) fail(`--${flag}: not a whole number of at least ${min}`);
    return value;
  };
  if (values.scenario !== 'night' && values.scenario !== 'month') fail('--scenario must be night or month');
  const sizes = values.sizes.split(',').map((size) => count('sizes', size.trim(), 0));
  return {
    scenario: values.scenario as 'night' | 'month',
    sizes,
    codes: count('codes', values.codes ?? (values.scenario === 'month' ? '10000' : '30000'), 2),
    rounds: count('rounds', values.rounds, 1),
    nights: count('nights', values.nights, 1),
    cacheDir: values['cache-dir'],
  };
}

/** Writes a CSV of the sandbox codes numbered `from` to `from + count - 1`, spread over the accounts. */
async function writeCodes(path: string, accounts: ListeningLine['accounts'], from: number, count: number) {
  const out = createWriteStream(path);
  out.write('order_code,account\n');
  for (let i = from; i < from + count; i++) {
    const account = accounts[i % accounts.length]!;
    const number = Math.floor(i / accounts.length) + 1;
    if (!out.write(`${account.firstOrder.slice(0, -8)}${String(number).padStart(8, '0')},${account.alias}\n`))
      await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

interface NightSummary {
  readonly counters: { readonly ok: number };
  readonly lookupsSpent: number;
  readonly peakMemoryMb: number;
}

interface Carrier {
  readonly url: string;
  readonly accounts: ListeningLine['accounts'];
  readonly keys: string;
}

/** USER_HZ, the unit of /proc's CPU times on Linux. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds of this process's children that have ended (cutime and cstime of /proc/self/stat), or
 * undefined where there is no /proc. Unlike wall time, barely moved by the machine's other load.
 */
async function endedChildrenCpuSeconds(): Promise<number | undefined> {
  const text = await readFile('/proc/self/stat', 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  // The fields after the command name, from the state (field 3): cutime and cstime are fields 16 and 17.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
}

/** Runs `parcel-recon track` over a CSV into a warehouse, as cron would: its summary, wall time and CPU time. */
async function trackNight(
  carrier: Carrier,
  db: string,
  csv: string,
): Promise<NightSummary & { seconds: number; cpuSeconds: number | undefined }> {
  // Terminal orders too: every night looks up all its codes, so the nights compare like for like.
  const args = [
    'track',
    '--input',
    csv,
    '--db',
    db,
    '--json',
    '--no-progress',
    '--log-level',
    'warn',
    '--refresh-terminal',
  ];
  const env = { ...process.env, PARCEL_RECON_API_KEYS: carrier.keys, PARCEL_RECON_TRACKING_URL: carrier.url };
  const cpuBefore = await endedChildrenCpuSeconds();
  const started = performance.now();
  const { stdout } = await promisify(execFile)(COMMAND_PATH, args, { env, maxBuffer: 16 * 1024 * 1024 });
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await endedChildrenCpuSeconds();
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  return { ...(JSON.parse(stdout) as NightSummary), seconds, cpuSeconds };
}

async function startCarrier(dir: string, orders: number): Promise<{ carrier: Carrier; stop: () => Promise<void> }> {
  const keysFile = join(dir, 'keys.json');
  const { child, listening } = await startSandboxProcess(keysFile, [
    '--accounts',
    String(ACCOUNTS),
    '--orders-per-account',
    String(Math.ceil(orders / ACCOUNTS)),
  ]);
  const keys = Object.entries(JSON.parse(await readFile(keysFile, 'utf8')) as Record<string, string>)
    .map(([alias, key]) => `${alias}=${key}`)
    .join(',');
  return { carrier: { url: listening.url, accounts: listening.accounts, keys }, stop: () => stopSandboxProcess(child) };
}

/** The synthetic warehouse of `size` orders in the cache, built when it is not there yet. */
async function cachedWarehouse(cacheDir: string, size: number): Promise<string> {
  const path = join(cacheDir, `synthetic-${size}.duckdb`);
  if (await stat(path).catch(() => undefined)) return path;
  process.stderr.write(`growth: building a synthetic warehouse of ${size} orders\n`);
  await buildSyntheticWarehouse(path, size, undefined, {
    lookupHistory: {
      nights: HISTORY_NIGHTS,
      perNight: Math.max(1, Math.floor(size / HISTORY_SHARE_PER_NIGHT)),
      lastNight: LAST_HISTORY_NIGHT,
    },
  });
  return path;
}

async function nightScenario(s: ReturnType<typeof settings>, dir: string, cacheDir: string): Promise<number> {
  const { carrier, stop } = await startCarrier(dir, s.codes);
  try {
    const stored = join(dir, 'stored.csv');
    const night = join(dir, 'night.csv');
    await writeCodes(stored, carrier.accounts, 0, s.codes / 2);
    await writeCodes(night, carrier.accounts, 0, s.codes);
    const best = new Map<
      number,
      { seconds: number; cpuSeconds: number | undefined; peakMemoryMb: number; loaded: number }
    >();
    for (let round = 0; round < s.rounds; round++) {
      for (const size of s.sizes) {
        const base = await cachedWarehouse(cacheDir, size);
        const runDir = join(dir, `night-${size}`);
        await rm(runDir, { recursive: true, force: true });
        await mkdir(runDir, { recursive: true });
        const db = join(runDir, 'recon.duckdb');
        await copyFile(base, db);
        // Written out before the nights, as a warehouse kept from night to night is: otherwise the copy's
        // writeback competes with the nights' commits, which wait for their own writes to reach the disk.
        const copy = await open(db, 'r+');
        await copy.sync();
        await copy.close();
        // The earlier night that stored half of the codes.
        await trackNight(carrier, db, stored);
        const measured = await trackNight(carrier, db, night);
        const kept = best.get(size);
        best.set(size, {
          seconds: Math.min(kept?.seconds ?? Number.POSITIVE_INFINITY, measured.seconds),
          cpuSeconds:
            measured.cpuSeconds === undefined
              ? undefined
              : Math.min(kept?.cpuSeconds ?? Number.POSITIVE_INFINITY, measured.cpuSeconds),
          peakMemoryMb: Math.max(kept?.peakMemoryMb ?? 0, measured.peakMemoryMb),
          loaded: measured.counters.ok,
        });
        await rm(runDir, { recursive: true, force: true });
      }
    }
    const smallest = best.get(Math.min(...s.sizes))!;
    const largestSize = Math.max(...s.sizes);
    const largest = best.get(largestSize)!;
    const ratio = Math.round((largest.seconds / smallest.seconds) * 1000) / 1000;
    // The CPU time the nights took, as a check on the wall-time ratio when the machine is shared; not the target.
    const cpuRatio =
      largest.cpuSeconds === undefined || smallest.cpuSeconds === undefined
        ? undefined
        : Math.round((largest.cpuSeconds / smallest.cpuSeconds) * 1000) / 1000;
    const peakMemoryMb = Math.max(...[...best.values()].map((night) => night.peakMemoryMb));
    const passed =
      ratio <= RATIO_TARGET &&
      peakMemoryMb < MEMORY_TARGET_MB &&
      [...best.values()].every((night) => night.loaded === s.codes);
    const hundredths = (seconds: number) => Math.round(seconds * 100) / 100;
    const nights = s.sizes.map((size) => {
      const night = best.get(size)!;
      return {
        storedOrders: size,
        seconds: hundredths(night.seconds),
        cpuSeconds: night.cpuSeconds === undefined ? undefined : hundredths(night.cpuSeconds),
        peakMemoryMb: night.peakMemoryMb,
        loaded: night.loaded,
      };
    });
    process.stdout.write(
      `${JSON.stringify({
        bench: 'growth',
        scenario: 'night',
        codes: s.codes,
        rounds: s.rounds,
        nights,
        ratio,
        cpuRatio,
        peakMemoryMb,
        target: `ratio <= ${RATIO_TARGET}, peak < ${MEMORY_TARGET_MB} MB`,
        passed,
        cpus: cpus().length,
        node: process.version,
      })}\n`,
    );
    process.stderr.write(
      `growth night: ${nights.map((n) => `${n.storedOrders} orders ${n.seconds} s (CPU ${n.cpuSeconds ?? '?'} s), ${n.peakMemoryMb} MB`).join('; ')}; ` +
        `ratio ${largestSize} / ${Math.min(...s.sizes)} orders ${ratio} (target <= ${RATIO_TARGET}; CPU ${cpuRatio ?? '?'}), peak ${peakMemoryMb} MB (target < ${MEMORY_TARGET_MB}): ${passed ? 'meets' : 'MISSES'} them\n`,
    );
    return passed ? 0 : 1;
  } finally {
    await stop();
  }
}

/** Bytes of the files under a folder, recursively (none when it does not exist). */
async function folderBytes(path: string): Promise<number> {
  const entries = await readdir(path, { withFileTypes: true, recursive: true }).catch(() => []);
  let bytes = 0;
  for (const entry of entries) if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size;
  return bytes;
}

async function monthScenario(s: ReturnType<typeof settings>, dir: string): Promise<number> {
  const step = s.codes / 2;
  const { carrier, stop } = await startCarrier(dir, step * (s.nights + 1));
  try {
    const dataDir = join(dir, 'data');
    await mkdir(dataDir, { recursive: true });
    const db = join(dataDir, 'recon.duckdb');
    let lookups = 0;
    let peakMemoryMb = 0;
    for (let night = 0; night < s.nights; night++) {
      const csv = join(dir, 'night.csv');
      await writeCodes(csv, carrier.accounts, night * step, s.codes);
      const summary = await trackNight(carrier, db, csv);
      lookups += summary.lookupsSpent;
      peakMemoryMb = Math.max(peakMemoryMb, summary.peakMemoryMb);
    }
    const orders = step * (s.nights + 1);
    const warehouseBytes = (await stat(db)).size + ((await stat(`${db}.wal`).catch(() => undefined))?.size ?? 0);
    const rawBytes = await folderBytes(dataFolder(dataDir).rawSpool);
    const perLookup = (bytes: number) => Math.round(bytes / lookups);
    const yearGb = (bytes: number) => Math.round(((bytes / lookups) * YEAR_NIGHTS * YEAR_LOOKUPS_PER_NIGHT) / 1e8) / 10;
    const report = {
      bench: 'growth',
      scenario: 'month',
      nights: s.nights,
      codesPerNight: s.codes,
      lookups,
      orders,
      warehouseBytes,
      rawSpoolBytes: rawBytes,
      warehouseBytesPerLookup: perLookup(warehouseBytes),
      warehouseBytesPerOrder: Math.round(warehouseBytes / orders),
      rawSpoolBytesPerLookup: perLookup(rawBytes),
      yearAt200kPerNight: { warehouseGb: yearGb(warehouseBytes), rawSpoolGb: yearGb(rawBytes) },
      peakMemoryMb,
      cpus: cpus().length,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.stderr.write(
      `growth month: ${s.nights} nights, ${lookups} lookups of ${orders} orders: warehouse ${report.warehouseBytesPerLookup} B per lookup ` +
        `(${report.warehouseBytesPerOrder} B per order), raw spool ${report.rawSpoolBytesPerLookup} B per lookup; ` +
        `a year at ${YEAR_LOOKUPS_PER_NIGHT} lookups a night: warehouse ${report.yearAt200kPerNight.warehouseGb} GB, raw spool ${report.yearAt200kPerNight.rawSpoolGb} GB\n`,
    );
    return lookups === s.codes * s.nights ? 0 : 1;
  } finally {
    await stop();
  }
}

async function main(): Promise<number> {
  const s = settings();
  const dir = await mkdtemp(join(tmpdir(), 'growth-bench-'));
  const cacheDir = s.cacheDir ?? join(dir, 'cache');
  await mkdir(cacheDir, { recursive: true });
  try {
    return s.scenario === 'night' ? await nightScenario(s, dir, cacheDir) : await monthScenario(s, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
