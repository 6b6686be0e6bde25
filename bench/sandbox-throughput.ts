/**
 * Tracking-lookup throughput of the carrier sandbox.
 *
 * The sandbox runs in a child process (`parcel-recon sandbox`) so that this load generator does not
 * share its event loop; this process drives it over keep-alive HTTP with an undici Pool, mixing valid
 * order codes of every account. Besides the rate it reports the sandbox process's CPU time per lookup
 * (user + system, all its threads), which other load on the machine disturbs less. Prints one JSON line
 * on stdout (and a readable line on stderr); exits 1 when the rate is under the target or any lookup
 * failed, 2 on a bad flag.
 *
 *   npm run bench:sandbox -- --lookups 60000 --connections 64 --target 5000
 *   npm run bench:sandbox -- --orders-per-account 200000    (each code looked up once, as a tracking run does)
 *   npm run bench:sandbox -- --cpu-prof-dir DIR             (the sandbox writes a CPU profile into DIR when it stops)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { OPERATION_PATHS } from '../src/carriers/247express/contract.js';
import { processCpuSeconds, processPeakMemoryMb } from './support/process-cpu.js';
import { type ListeningLine, startSandboxProcess, stopSandboxProcess } from './support/sandbox-process.js';

interface BenchSettings {
  lookups: number;
  warmup: number;
  connections: number;
  maxSeconds: number;
  target: number;
  ordersPerAccount: number;
  cpuProfileDir: string | undefined;
}

function readSettings(): BenchSettings {
  const { values } = parseArgs({
    options: {
      lookups: { type: 'string', default: '60000' },
      warmup: { type: 'string', default: '3000' },
      connections: { type: 'string', default: '64' },
      'max-seconds': { type: 'string', default: '60' },
      target: { type: 'string', default: '5000' },
      // The sandbox's own default world: every order is looked up many times. With as many orders per
      // account as lookups, or more, each code is looked up once, as in a tracking run.
      'orders-per-account': { type: 'string', default: '500' },
      'cpu-prof-dir': { type: 'string' },
    },
  });
  const positive = (flag: string, text: string): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) {
      process.stderr.write(`sandbox-throughput: --${flag}: not a positive integer: ${JSON.stringify(text)}\n`);
      process.exit(2);
    }
    return value;
  };
  return {
    lookups: positive('lookups', values.lookups),
    warmup: positive('warmup', values.warmup),
    connections: positive('connections', values.connections),
    maxSeconds: positive('max-seconds', values['max-seconds']),
    target: positive('target', values.target),
    ordersPerAccount: positive('orders-per-account', values['orders-per-account']),
    cpuProfileDir: values['cpu-prof-dir'],
  };
}

/** Request paths of valid lookups, accounts interleaved, spread over each account's orders. */
function lookupPaths(
  listening: ListeningLine,
  keys: Record<string, string>,
  ordersPerAccount: number,
  count: number,
): string[] {
  const paths: string[] = [];
  const accounts = listening.accounts;
  for (let i = 0; i < count; i++) {
    const account = accounts[i % accounts.length]!;
    const orderNumber = ((Math.floor(i / accounts.length) * 7919) % ordersPerAccount) + 1;
    const code = `${account.firstOrder.slice(0, -8)}${String(orderNumber).padStart(8, '0')}`;
    paths.push(`${OPERATION_PATHS.tracking}?apiKey=${encodeURIComponent(keys[account.alias]!)}&ordercode=${code}`);
  }
  return paths;
}

interface RunResult {
  done: number;
  errors: number;
  firstError: string | null;
  latenciesMs: Float64Array;
  seconds: number;
}

/** Sends the lookups over `connections` workers, each one request at a time, until done or out of time. */
async function drive(pool: Pool, paths: string[], connections: number, maxSeconds: number): Promise<RunResult> {
  const latenciesMs = new Float64Array(paths.length);
  let next = 0;
  let done = 0;
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  const worker = async () => {
    while (next < paths.length && performance.now() < deadline) {
      const i = next++;
      const sent = performance.now();
      try {
        const answer = await pool.request({ method: 'GET', path: paths[i]! });
        const body = (await answer.body.json()) as { errorCode?: string | null };
        if (answer.statusCode !== 200 || body.errorCode)
          throw new Error(`HTTP ${answer.statusCode}, errorCode ${String(body.errorCode)}`);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
      latenciesMs[done++] = performance.now() - sent;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return {
    done,
    errors,
    firstError,
    latenciesMs: latenciesMs.subarray(0, done),
    seconds: (performance.now() - started) / 1000,
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<number> {
  const settings = readSettings();
  const dir = await mkdtemp(join(tmpdir(), 'sandbox-bench-'));
  const keysFile = join(dir, 'keys.json');
  const profiling =
    settings.cpuProfileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', settings.cpuProfileDir];
  const { child, listening } = await startSandboxProcess(
    keysFile,
    ['--orders-per-account', String(settings.ordersPerAccount)],
    profiling,
  );
  const pool = new Pool(listening.url, { connections: settings.connections, pipelining: 1 });
  try {
    const keys = JSON.parse(await readFile(keysFile, 'utf8')) as Record<string, string>;
    const paths = lookupPaths(listening, keys, settings.ordersPerAccount, settings.warmup + settings.lookups);
    const warm = await drive(pool, paths.slice(0, settings.warmup), settings.connections, settings.maxSeconds);
    const cpuBefore = await processCpuSeconds(child.pid!);
    const run = await drive(pool, paths.slice(settings.warmup), settings.connections, settings.maxSeconds);
    const sandboxCpuUsPerLookup = Math.round((((await processCpuSeconds(child.pid!)) - cpuBefore) / run.done) * 1e6);
    const sandboxPeakMemoryMb = await processPeakMemoryMb(child.pid!);
    const sorted = run.latenciesMs.slice().sort();
    const lookupsPerSecond = Math.round(run.done / run.seconds);
    const errors = warm.errors + run.errors;
    const passed = lookupsPerSecond >= settings.target && errors === 0;
    const report = {
      bench: 'sandbox-throughput',
      lookups: run.done,
      seconds: round2(run.seconds),
      lookupsPerSecond,
      p50Ms: round2(percentile(sorted, 50)),
      p99Ms: round2(percentile(sorted, 99)),
      sandboxCpuUsPerLookup,
      sandboxPeakMemoryMb,
      errors,
      firstError: warm.firstError ?? run.firstError,
      connections: settings.connections,
      accounts: listening.accounts.length,
      ordersPerAccount: settings.ordersPerAccount,
      target: settings.target,
      passed,
      cpus: cpus().length,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.stderr.write(
      `sandbox tracking lookups: ${lookupsPerSecond.toLocaleString('en-US')}/s over ${report.lookups.toLocaleString('en-US')} lookups ` +
        `(p50 ${report.p50Ms} ms, p99 ${report.p99Ms} ms, sandbox CPU ${sandboxCpuUsPerLookup} µs per lookup, sandbox peak memory ${sandboxPeakMemoryMb} MB, ${errors} errors, ` +
        `${settings.connections} connections, ${report.cpus} CPUs): ` +
        `${passed ? 'meets' : 'MISSES'} the target of ${settings.target.toLocaleString('en-US')}/s${errors > 0 ? ' without errors' : ''}\n`,
    );
    return passed ? 0 : 1;
  } finally {
    await pool.close();
    await stopSandboxProcess(child);
    await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
