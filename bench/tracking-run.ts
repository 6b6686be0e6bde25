/**
 * End-to-end tracking runs against the sandbox (in a child process), three scenarios:
 *
 *   throughput  lookups per second with no injected latency (target: at least 3,000/s)
 *   rate-cap    achieved rate against a configured cap, 50 to 300 ms latency (target: at least 97%),
 *               the rate of requests sent, from the first send to the last
 *   memory      peak memory (max RSS) tracking 1,000,000 codes (target: under 300 MB), of a
 *               `parcel-recon track` process as cron starts it (the summary's peakMemoryMb)
 *
 *   npm run bench:tracking -- --scenario throughput [--codes N] [--concurrency N] [--rate N] [--batch-size N] [--memory-limit 256MB]
 *
 * For throughput and rate-cap the pipeline runs in this process, so that the rate of sends can be
 * taken, with the track command's memory settings: those read at start come from the npm script,
 * which runs this file under bin/node-with-track-settings. Prints one JSON line on stdout
 * and a readable line on stderr; exits 1 when the target is missed, 2 on a bad flag.
 */
import './support/tracking-allocator.js';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pino from 'pino';
import { instantToEpochMs, parseCarrierInstant } from '../src/carriers/247express/contract.js';
import { DEFAULT_MAX_ANSWER_BYTES } from '../src/carriers/client/answer-size.js';
import { DefinedCarrierTracker } from '../src/carriers/client/carrier-tracker.js';
import { KeyRing } from '../src/carriers/client/key-ring.js';
import { DEFAULT_CARRIER_ID } from '../src/carriers/known-carriers.js';
import { keepHeapSmall } from '../src/cli/tracking-memory.js';
import { RUN_EXIT_CODES } from '../src/errors/exit-codes.js';
import { runTracking } from '../src/pipeline/tracking/track-run.js';
import { trackingWarehouseOptions } from '../src/pipeline/tracking/tracking-warehouse-options.js';
import { QuotaPolicySchema } from '../src/quota/quota-policy.js';
import { csvSource } from '../src/sources/csv-source.js';
import { Warehouse } from '../src/warehouse/warehouse.js';
import { cpuSince, type ProcessCpu, processCpu } from './support/process-cpu.js';
import { COMMAND_PATH, SANDBOX_START, startSandboxProcess, stopSandboxProcess } from './support/sandbox-process.js';

type Scenario = 'throughput' | 'rate-cap' | 'memory';

const SCENARIOS: Record<Scenario, { codes: number; concurrency: number; rate?: number; sandboxArgs: string[] }> = {
  throughput: { codes: 30_000, concurrency: 128, sandboxArgs: [] },
  'rate-cap': {
    codes: 4_000,
    concurrency: 128,
    rate: 200,
    sandboxArgs: ['--latency-min', '50', '--latency-max', '300'],
  },
  memory: { codes: 1_000_000, concurrency: 128, sandboxArgs: [] },
};

function settings() {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'throughput' },
      codes: { type: 'string' },
      concurrency: { type: 'string' },
      rate: { type: 'string' },
      'memory-limit': { type: 'string' },
      'batch-size': { type: 'string' },
    },
  });
  const scenario = values.scenario as Scenario;
  const base = SCENARIOS[scenario];
  if (!base) {
    process.stderr.write(`tracking-run: --scenario must be one of ${Object.keys(SCENARIOS).join(', ')}\n`);
    process.exit(2);
  }
  const number = (flag: string, text: string | undefined, fallback: number | undefined) => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!(value > 0)) {
      process.stderr.write(`tracking-run: --${flag}: not a positive number\n`);
      process.exit(2);
    }
    return value;
  };
  return {
    scenario,
    codes: number('codes', values.codes, base.codes)!,
    concurrency: number('concurrency', values.concurrency, base.concurrency)!,
    rate: number('rate', values.rate, base.rate),
    batchSize: number('batch-size', values['batch-size'], 1_000)!,
    sandboxArgs: base.sandboxArgs,
    memoryLimit: values['memory-limit'],
  };
}

/** Writes a CSV of `count` codes spread over the accounts, streaming. */
async function writeCodes(
  path: string,
  accounts: { alias: string; firstOrder: string }[],
  count: number,
): Promise<void> {
  const out = createWriteStream(path);
  out.write('order_code,account\n');
  for (let i = 0; i < count; i++) {
    const account = accounts[i % accounts.length]!;
    const number = Math.floor(i / accounts.length) + 1;
    if (!out.write(`${account.firstOrder.slice(0, -8)}${String(number).padStart(8, '0')},${account.alias}\n`))
      await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function main(): Promise<number> {
  const s = settings();
  const dir = await mkdtemp(join(tmpdir(), 'tracking-bench-'));
  const keysFile = join(dir, 'keys.json');
  // Each key may look up 200,000 orders a day, at the sandbox as at the carrier: enough accounts to stay under that.
  const accounts = Math.max(3, Math.ceil(s.codes / 180_000));
  const perAccount = Math.ceil(s.codes / accounts);
  const { child, listening } = await startSandboxProcess(keysFile, [
    '--accounts',
    String(accounts),
    '--orders-per-account',
    String(perAccount),
    ...s.sandboxArgs,
  ]);
  const keyEntries = Object.entries(JSON.parse(await readFile(keysFile, 'utf8')) as Record<string, string>);
  const csv = join(dir, 'codes.csv');
  if (s.scenario === 'memory') {
    try {
      await writeCodes(csv, listening.accounts, s.codes);
      return await measureTrackCommand(s, dir, csv, keyEntries, listening.url);
    } finally {
      await stopSandboxProcess(child);
      await rm(dir, { recursive: true, force: true });
    }
  }
  keepHeapSmall();
  const warehouse = await Warehouse.open(join(dir, 'recon.duckdb'), trackingWarehouseOptions(s.memoryLimit));
  try {
    const keys = new KeyRing(keyEntries);
    await writeCodes(csv, listening.accounts, s.codes);
    const sandboxNow = instantToEpochMs(parseCarrierInstant(SANDBOX_START)!);
    let lookupsStarted = 0;
    let cpuAtStart: { pipeline: ProcessCpu; sandbox: ProcessCpu } | undefined;
    // The rate is that of requests sent: the first to the last send, not the last answer or the final commit.
    const sends = { first: 0, last: 0, count: 0 };
    const lookup = DefinedCarrierTracker.prototype.lookup;
    DefinedCarrierTracker.prototype.lookup = function (
      this: DefinedCarrierTracker,
      ...args: Parameters<typeof lookup>
    ) {
      sends.last = performance.now();
      if (sends.count++ === 0) sends.first = sends.last;
      return lookup.apply(this, args);
    };
    const summary = await runTracking({
      exitCodes: RUN_EXIT_CODES,
      job: 'bench',
      carrier: DEFAULT_CARRIER_ID,
      sources: [csvSource(csv, {})],
      keys,
      warehouse,
      dataDir: dir,
      client: {
        trackingUrl: listening.url,
        timeoutMs: 10_000,
        maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
        connections: s.concurrency,
      },
      quota: QuotaPolicySchema.parse({ maxConcurrent: s.concurrency, requestsPerSecond: s.rate }),
      retry: { attempts: 3, minDelayMs: 50, maxDelayMs: 1_000 },
      batchSize: s.batchSize,
      refreshTerminal: true,
      now: () => sandboxNow,
      logger: pino({ level: 'warn' }, pino.destination(2)),
      progress: {
        start: () => {
          lookupsStarted = performance.now();
          cpuAtStart = { pipeline: processCpu(process.pid), sandbox: processCpu(child.pid!) };
        },
        update: () => {},
        stop: () => {},
      },
      graceMs: 5_000,
    });
    const lookupSeconds = (performance.now() - lookupsStarted) / 1000;
    const cpuPerLookup = cpuMsPerLookup(cpuAtStart!, summary.lookupsSpent, child.pid!);
    const perSecond =
      s.scenario === 'rate-cap'
        ? (sends.count - 1) / ((sends.last - sends.first) / 1000)
        : summary.lookupsSpent / lookupSeconds;
    const maxRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    const outcome =
      s.scenario === 'throughput'
        ? { figure: Math.round(perSecond), unit: 'lookups/s', target: '>= 3000', passed: perSecond >= 3_000 }
        : {
            figure: Math.round((perSecond / s.rate!) * 1000) / 10,
            unit: '% of the cap',
            target: '>= 97',
            passed: perSecond / s.rate! >= 0.97,
          };
    const report = {
      bench: 'tracking-run',
      scenario: s.scenario,
      codes: s.codes,
      loaded: summary.counters.ok,
      lookups: summary.lookupsSpent,
      lookupSeconds: Math.round(lookupSeconds * 100) / 100,
      lookupsPerSecond: Math.round(perSecond),
      rateCap: s.rate ?? null,
      maxRssMb,
      concurrency: s.concurrency,
      cpuMsPerLookup: cpuPerLookup,
      ...outcome,
      cpus: cpus().length,
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.stderr.write(
      `tracking ${s.scenario}: ${outcome.figure} ${outcome.unit} (target ${outcome.target}): ${outcome.passed ? 'meets' : 'MISSES'} it; ` +
        `${summary.lookupsSpent} lookups in ${report.lookupSeconds} s, ${summary.counters.ok} loaded, max RSS ${maxRssMb} MB; ` +
        `CPU ms per lookup: main thread ${cpuPerLookup.main}, other threads ${cpuPerLookup.otherThreads}, sandbox ${cpuPerLookup.sandbox}, total ${cpuPerLookup.total}\n`,
    );
    return outcome.passed && summary.counters.ok === s.codes ? 0 : 1;
  } finally {
    await warehouse.close();
    await stopSandboxProcess(child);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * CPU time per lookup since the lookups started (final commit included): the pipeline's main thread,
 * its other threads (DuckDB, compression, GC helpers), and the sandbox child. On N cores, N * 1000 / total
 * is the most lookups a second the machine could do, whatever else shares it during the run.
 */
function cpuMsPerLookup(atStart: { pipeline: ProcessCpu; sandbox: ProcessCpu }, lookups: number, sandboxPid: number) {
  const pipeline = cpuSince(atStart.pipeline, processCpu(process.pid));
  const sandbox = cpuSince(atStart.sandbox, processCpu(sandboxPid));
  const perLookup = (ms: number) => Math.round((ms / lookups) * 1000) / 1000;
  return {
    main: perLookup(pipeline.mainMs),
    otherThreads: perLookup(pipeline.otherThreadsMs),
    sandbox: perLookup(sandbox.mainMs + sandbox.otherThreadsMs),
    total: perLookup(pipeline.mainMs + pipeline.otherThreadsMs + sandbox.mainMs + sandbox.otherThreadsMs),
  };
}

interface TrackCommandSummary {
  readonly counters: { readonly ok: number };
  readonly lookupsSpent: number;
  readonly durationMs: number;
  readonly peakMemoryMb: number;
}

/** Runs `parcel-recon track` (bin/parcel-recon) over the codes as a child process, as cron would, and takes its peak memory from its summary. */
async function measureTrackCommand(
  s: ReturnType<typeof settings>,
  dir: string,
  csv: string,
  keys: [string, string][],
  trackingUrl: string,
): Promise<number> {
  const args = [
    'track',
    '--input',
    csv,
    '--db',
    join(dir, 'recon.duckdb'),
    '--json',
    '--no-progress',
    '--log-level',
    'warn',
    '--concurrency',
    String(s.concurrency),
    '--batch-size',
    String(s.batchSize),
  ];
  if (s.memoryLimit !== undefined) args.push('--memory-limit', s.memoryLimit);
  const env = {
    ...process.env,
    PARCEL_RECON_API_KEYS: keys.map(([alias, key]) => `${alias}=${key}`).join(','),
    PARCEL_RECON_TRACKING_URL: trackingUrl,
  };
  const { stdout } = await promisify(execFile)(COMMAND_PATH, args, { env, maxBuffer: 16 * 1024 * 1024 });
  const summary = JSON.parse(stdout) as TrackCommandSummary;
  const passed = summary.peakMemoryMb < 300;
  const report = {
    bench: 'tracking-run',
    scenario: s.scenario,
    codes: s.codes,
    loaded: summary.counters.ok,
    lookups: summary.lookupsSpent,
    runSeconds: Math.round(summary.durationMs / 10) / 100,
    maxRssMb: summary.peakMemoryMb,
    concurrency: s.concurrency,
    figure: summary.peakMemoryMb,
    unit: 'MB max RSS',
    target: '< 300',
    passed,
    cpus: cpus().length,
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.stderr.write(
    `tracking memory: ${summary.peakMemoryMb} MB max RSS of parcel-recon track (target < 300): ${passed ? 'meets' : 'MISSES'} it; ` +
      `${summary.lookupsSpent} lookups, ${summary.counters.ok} loaded, run ${report.runSeconds} s\n`,
  );
  return passed && summary.counters.ok === s.codes ? 0 : 1;
}

process.exitCode = await main();
