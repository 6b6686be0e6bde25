/**
 * The HTML report over a large warehouse: builds the synthetic warehouse of `--orders` orders (the
 * one bench:reports uses), writes the page with `parcel-recon report html` as a child process, then
 * opens it in headless Chromium (network off) and times its load. Prints one JSON line on stdout and
 * a readable summary on stderr; exits 1 when the page is over `--max-mb` MB or loads slower than
 * `--max-load` seconds, 2 on a bad flag.
 *
 *   npm run bench:html -- --orders 100000
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { buildSyntheticWarehouse } from './support/synthetic-warehouse.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../src/cli/main.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function fail(message: string): never {
  process.stderr.write(`html bench: ${message}\n`);
  process.exit(2);
}

function readSettings(): { orders: number; maxMb: number; maxLoad: number; loads: number } {
  const { values } = parseArgs({
    options: {
      orders: { type: 'string', default: '100000' },
      'max-mb': { type: 'string', default: '5' },
      'max-load': { type: 'string', default: '2' },
      loads: { type: 'string', default: '5' },
    },
  });
  const settings = {
    orders: Number(values.orders),
    maxMb: Number(values['max-mb']),
    maxLoad: Number(values['max-load']),
    loads: Number(values.loads),
  };
  if (!Number.isInteger(settings.orders) || settings.orders <= 0)
    fail(`--orders: not a positive integer: ${values.orders}`);
  if (!(settings.maxMb > 0)) fail(`--max-mb: not a positive number: ${values['max-mb']}`);
  if (!(settings.maxLoad > 0)) fail(`--max-load: not a positive number: ${values['max-load']}`);
  if (!Number.isInteger(settings.loads) || settings.loads <= 0)
    fail(`--loads: not a positive integer: ${values.loads}`);
  return settings;
}

/** Opens the page `loads` times in a fresh offline page each; the load times in seconds (goto until 'load'). */
async function loadTimes(path: string, loads: number): Promise<number[]> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--proxy-server=127.0.0.1:9', '--proxy-bypass-list=<-loopback>'],
  });
  try {
    const context = await browser.newContext();
    await context.setOffline(true);
    const times: number[] = [];
    for (let i = 0; i < loads; i++) {
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
      times.push((performance.now() - started) / 1000);
      await page.close();
    }
    return times;
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const settings = readSettings();
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-bench-html-'));
  try {
    const dbPath = join(dir, 'recon.duckdb');
    const buildStarted = performance.now();
    await buildSyntheticWarehouse(dbPath, settings.orders);
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    process.stderr.write(`built a warehouse of ${settings.orders} orders in ${buildSeconds.toFixed(1)} s\n`);
    const out = join(dir, 'report.html');
    const writeStarted = performance.now();
    await run(
      process.execPath,
      [CLI, 'report', 'html', '--db', dbPath, '--out', out, '--from', '2026-10-01', '--to', '2026-12-31', '--json'],
      {
        env: { ...process.env, PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' },
      },
    );
    const writeSeconds = (performance.now() - writeStarted) / 1000;
    const bytes = (await stat(out)).size;
    const times = await loadTimes(out, settings.loads);
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const slowest = sorted[sorted.length - 1]!;
    const megabytes = bytes / 1e6;
    process.stderr.write(
      `page written in ${writeSeconds.toFixed(1)} s: ${megabytes.toFixed(2)} MB; load ${times.map((t) => t.toFixed(2)).join(', ')} s (median ${median.toFixed(2)} s)\n`,
    );
    const machine = {
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: loadavg(),
    };
    const round = (n: number) => Math.round(n * 100) / 100;
    process.stdout.write(
      `${JSON.stringify({ orders: settings.orders, buildSeconds: round(buildSeconds), writeSeconds: round(writeSeconds), bytes, loadSeconds: times.map(round), medianLoadSeconds: round(median), machine })}\n`,
    );
    if (megabytes > settings.maxMb || slowest > settings.maxLoad) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
