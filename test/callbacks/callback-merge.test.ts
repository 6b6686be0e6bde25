/**
 * The receiver (a real process) takes the sandbox's status callbacks for simulated nights while the
 * nightly track run (the real command) polls the same orders into the same warehouse: the missed-
 * callback view stays empty while every callback arrives, and lists exactly the callbacks the
 * sandbox was told to drop. Orders whose latest callback is terminal are not looked up again.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { epochOf, keysOf, postControl, startTestSandbox, truthCallbacks } from '../sandbox/sandbox-http.js';
import {
  CLI,
  queryWarehouse,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/callback-receiver-process.js';

const run = promisify(execFile);
const ORDERS_PER_ACCOUNT = 150;

function changeKey(orderCode: string, status: string, time: string): string {
  return `${orderCode}|${status}|${epochOf(time)}`;
}

describe('callbacks merged with the nightly tracking', () => {
  let dir: string;
  let dbPath: string;
  let csv: string;
  let sandbox: RunningSandbox;
  let receiver: ReceiverProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-callback-merge-'));
    dbPath = join(dir, 'recon.duckdb');
    sandbox = await startTestSandbox({
      seed: 77,
      ordersPerAccount: ORDERS_PER_ACCOUNT,
      callbacks: { retryBaseMs: 5, maxAttempts: 8, duplicateRate: 0.1, concurrency: 16 },
    });
    const keys = keysOf(sandbox);
    env = {
      PARCEL_RECON_API_KEYS: Object.entries(keys)
        .map(([alias, key]) => `${alias}=${key}`)
        .join(','),
      PARCEL_RECON_TRACKING_URL: sandbox.url,
    };
    receiver = await startReceiverProcess(['--db', dbPath, '--ingest-interval-ms', '300'], env);
    await postControl(sandbox, '/_sandbox/callbacks', { url: receiver.url });
    const rows = ['order_code,account'];
    for (const account of sandbox.state.world.accounts)
      for (let i = 0; i < ORDERS_PER_ACCOUNT; i++)
        rows.push(`${sandbox.state.world.orderCode(account.index, i)},${account.alias}`);
    csv = join(dir, 'orders.csv');
    await writeFile(csv, `${rows.join('\n')}\n`);
  });

  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A simulated night: the clock moves a day, every callback is delivered, then the nightly run polls every order. */
  async function night(extraArgs: string[] = []): Promise<string> {
    await postControl(sandbox, '/_sandbox/clock', { advanceHours: 24 });
    await postControl(sandbox, '/_sandbox/callbacks/flush');
    const { stdout } = await run(
      process.execPath,
      [CLI, 'track', '--input', csv, '--db', dbPath, '--json', '--retry-min-ms', '5', ...extraArgs],
      {
        env: {
          PATH: process.env.PATH ?? '',
          ...env,
          PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
        },
        timeout: 120_000,
      },
    );
    return (JSON.parse(stdout) as { runId: string }).runId;
  }

  async function missed(): Promise<string[]> {
    const rows = await queryWarehouse<{ order_code: string; status: string; time: string }>(
      dbPath,
      `SELECT order_code, status, strftime(time, '%Y-%m-%dT%H:%M:%SZ') AS time FROM missed_callbacks`,
    );
    return rows.map((r) => changeKey(r.order_code, r.status, r.time)).sort();
  }

  it('finds no missed callback over three nights, and skips orders whose latest callback is terminal', {
    timeout: 300_000,
  }, async () => {
    const runs: string[] = [];
    for (let i = 0; i < 3; i++) runs.push(await night());
    const truth = await truthCallbacks(sandbox);
    expect(truth.length).toBeGreaterThan(100);
    expect(truth.every((r) => r.outcome === 'delivered')).toBe(true);
    expect(truth.some((r) => r.duplicated)).toBe(true);

    const stored = await queryWarehouse<{ key: string }>(
      dbPath,
      `SELECT order_code || '|' || status || '|' || epoch_ms(date_trunc('second', event_time)) AS key FROM callback_events`,
    );
    expect(stored.map((r) => r.key).sort()).toEqual(truth.map((r) => changeKey(r.orderCode, r.status, r.time)).sort());
    expect(await missed()).toEqual([]);
    const [coverage] = await queryWarehouse<{ polled: number; both: number }>(
      dbPath,
      'SELECT count(*) FILTER (WHERE seen_by_tracking)::INT AS polled, count(*) FILTER (WHERE seen_by_tracking AND seen_by_callback)::INT AS both FROM order_status_timeline',
    );
    expect(coverage!.both).toBeGreaterThan(50);

    // Failed attempts the callbacks reported are delivery failures, one per attempt.
    const failedAttempts = new Set(
      truth.filter((r) => r.status === '16' && r.delayCode !== null).map((r) => `${r.orderCode}|${epochOf(r.time)}`),
    );
    const failures = await queryWarehouse<{ key: string }>(
      dbPath,
      `SELECT order_code || '|' || epoch_ms(attempted_at) AS key FROM delivery_failures WHERE source = 'callback'`,
    );
    expect(failedAttempts.size).toBeGreaterThan(0);
    expect(new Set(failures.map((r) => r.key))).toEqual(failedAttempts);

    // Night 3 looked up none of the orders whose latest callback was terminal, though their stored snapshot was not.
    const [skipped] = await queryWarehouse<{ terminal_by_callback: number; looked_up: number }>(
      dbPath,
      `SELECT count(*)::INT AS terminal_by_callback,
              count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lookup_results r WHERE r.run_id = '${runs[2]}' AND r.order_code = l.order_code))::INT AS looked_up
       FROM order_latest_callbacks l
       WHERE l.is_terminal AND l.event_time < (SELECT started_at FROM runs WHERE run_id = '${runs[2]}')
         AND l.order_code IN (SELECT order_code FROM lookup_results WHERE run_id = '${runs[1]}' AND outcome = 'ok')`,
    );
    console.log(
      `three nights: ${truth.length} callbacks (${truth.filter((r) => r.duplicated).length} sent twice), ${failedAttempts.size} failed attempts, ${skipped!.terminal_by_callback} orders not looked up again on night 3 (terminal by callback)`,
    );
    expect(skipped!.looked_up).toBe(0);
    expect(skipped!.terminal_by_callback).toBeGreaterThan(0);
  });

  it('lists exactly the callbacks the sandbox dropped', { timeout: 300_000 }, async () => {
    await postControl(sandbox, '/_sandbox/callbacks', { dropRate: 0.3 });
    // Every order polled, so the history holds every change of the night, dropped ones included.
    await night(['--refresh-terminal']);
    const dropped = (await truthCallbacks(sandbox)).filter((r) => r.outcome === 'dropped');
    console.log(`night 4: ${dropped.length} callbacks dropped`);
    expect(dropped.length).toBeGreaterThan(3);
    expect(await missed()).toEqual(dropped.map((r) => changeKey(r.orderCode, r.status, r.time)).sort());
  });
});
