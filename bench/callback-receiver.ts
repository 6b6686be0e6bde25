/**
 * The callback receiver's pace: `parcel-recon callbacks` in a child process on loopback, driven first
 * at a fixed 1,000 callbacks per second (latency of the acknowledgements, each made durable with a
 * group-committed fdatasync), then as fast as 64 keep-alive connections go (acknowledged per second).
 * Usage: node dist/bench/callback-receiver.js [--total N]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type LoadReport, latencyPercentile, runCallbackLoad } from './support/callback-load.js';
import { processCpuSeconds } from './support/process-cpu.js';

const CLI_PATH = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const { values } = parseArgs({ options: { total: { type: 'string', default: '20000' } } });
const total = Number(values.total);

const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-bench-callbacks-'));
const child = spawn(process.execPath, [CLI_PATH, 'callbacks', '--port', '0', '--db', join(dir, 'recon.duckdb')], {
  env: { PATH: process.env.PATH ?? '', PARCEL_RECON_API_KEYS: 'bench=bench-key-0001' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
const url = await new Promise<string>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`the receiver exited with code ${String(code)}`)));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    const parsed = JSON.parse(line) as { msg?: string; url?: string };
    if (parsed.msg === 'callback receiver listening') resolve(parsed.url!);
  });
});

const receiverCpuSeconds = () => processCpuSeconds(child.pid!);

function describe(label: string, report: LoadReport, cpuSeconds: number): void {
  const acknowledged = report.outcomes.filter((o) => o.accepted).length;
  const seconds = report.durationMs / 1000;
  console.log(
    `${label}: ${report.outcomes.length} callbacks in ${seconds.toFixed(1)} s, sent at ${report.sendRate.toFixed(0)}/s, ` +
      `${acknowledged} acknowledged (${(acknowledged / seconds).toFixed(0)}/s); latency p50 ${latencyPercentile(report.outcomes, 50).toFixed(1)} ms, ` +
      `p99 ${latencyPercentile(report.outcomes, 99).toFixed(1)} ms; receiver CPU ${((cpuSeconds / report.outcomes.length) * 1000).toFixed(2)} ms per callback`,
  );
}

try {
  const shares = { duplicate: 0, badCredential: 0, malformed: 0 };
  let cpu = await receiverCpuSeconds();
  const paced = await runCallbackLoad(url, {
    total,
    perSecond: 1_000,
    perHundred: shares,
    keys: ['bench-key-0001'],
    orderPrefix: 'BP',
  });
  describe('fixed 1,000/s', paced, (await receiverCpuSeconds()) - cpu);
  cpu = await receiverCpuSeconds();
  const flat = await runCallbackLoad(url, {
    total,
    perSecond: 1_000_000,
    perHundred: shares,
    keys: ['bench-key-0001'],
    orderPrefix: 'BF',
  });
  describe('as fast as 64 connections go', flat, (await receiverCpuSeconds()) - cpu);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await rm(dir, { recursive: true, force: true });
}
