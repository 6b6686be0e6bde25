import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import { inShard } from '../../src/pipeline/tracking/shard.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { DAY_MS, postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv } from '../support/cli-process.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { sandboxLookups, type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const WORKERS = 4;
const CODES_PER_KEY = 40;
/** Below the codes per key: the workers together must stop at it. */
const PER_KEY = 30;

interface JobSummary {
  exitCode: number;
  steps: { step: string; summary: { lookupsSpent?: number } }[];
  summaryFile: string;
}

async function queryFile<T>(dbPath: string, sql: string): Promise<T[]> {
  const warehouse = await Warehouse.open(dbPath, { readOnly: true });
  try {
    return (await warehouse.connection.runAndReadAll(sql)).getRowObjectsJson() as T[];
  } finally {
    await warehouse.close();
  }
}

const codesIn = async (dbPath: string, sql: string) =>
  (await queryFile<{ order_code: string }>(dbPath, sql)).map((row) => row.order_code);

describe('the nightly job on four workers: one Redis, a shard each, one merge', () => {
  let sandbox: RunningSandbox;
  let redis: RedisServer;
  let workspace: TrackingWorkspace;
  let csv: string;
  let codes: string[];
  let aliases: string[];

  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await startTestSandbox({ ordersPerAccount: CODES_PER_KEY });
    workspace = await trackingWorkspace();
    aliases = sandbox.state.world.accounts.map((a) => a.alias);
    const rows = sandbox.state.world.accounts.flatMap((account) =>
      Array.from({ length: CODES_PER_KEY }, (_, i) => [sandbox.state.world.orderCode(account.index, i), account.alias]),
    );
    codes = rows.map(([code]) => code!);
    csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...rows]);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await redis?.stop();
    await workspace?.dispose();
  });

  const today = () => carrierDayOf(sandbox.state.clock.now());
  const workerDb = (dir: string, index: number) => join(dir, `worker-${index}`, 'recon.duckdb');

  /** Worker `index`'s configuration: its own warehouse, the shared Redis and its shard; the same source for all. */
  async function writeWorkerConfig(
    dir: string,
    index: number,
    count: number,
    track: Record<string, unknown>,
  ): Promise<string> {
    await mkdir(join(dir, `worker-${index}`), { recursive: true });
    const file = join(dir, `worker-${index}`, 'parcel-recon.config.json');
    await writeFile(
      file,
      JSON.stringify({
        warehouse: workerDb(dir, index),
        trackingUrl: sandbox.url,
        source: { inputs: [csv] },
        // A rate, as real nights have: without one, the workers that start first could spend the whole
        // quota before the last has started, leaving it nothing to look up.
        track: { shard: `${index}/${count}`, concurrency: 4, rate: 10, retryMinMs: 5, graceMs: 1_000, ...track },
      }),
    );
    return file;
  }

  const runNightly = (config: string, env: Record<string, string> = {}): Promise<CliResult> =>
    cli(['jobs', 'run', 'nightly', '--config', config, '--json'], { ...sandboxEnv(sandbox), ...env });

  const lookupsSpent = (result: CliResult) =>
    (JSON.parse(result.stdout) as JobSummary).steps.find((s) => s.step === 'track')!.summary.lookupsSpent!;

  it('share the quota, each looks up only its shard, and the merge holds every code once', {
    timeout: 180_000,
  }, async () => {
    const dir = join(workspace.dir, 'four');
    const configs = (perKeyLimit: number) =>
      Promise.all(
        Array.from({ length: WORKERS }, (_, i) =>
          writeWorkerConfig(dir, i, WORKERS, { redis: redis.url, perKeyLimit }),
        ),
      );

    // Night one: 40 codes per key against 30 lookups per key for all four workers together.
    const firstDay = today();
    const before = sandboxLookups(sandbox, firstDay);
    const night = await Promise.all((await configs(PER_KEY)).map((config) => runNightly(config)));
    for (const result of night) expect([0, 3], result.stderr).toContain(result.code);
    expect(night.some((r) => r.code === 3)).toBe(true);
    const seen = sandboxLookups(sandbox, firstDay);
    for (const alias of aliases) expect((seen[alias] ?? 0) - (before[alias] ?? 0)).toBe(PER_KEY);
    expect(night.map(lookupsSpent).reduce((a, b) => a + b, 0)).toBe(PER_KEY * aliases.length);
    const ledger = await redis.client.hgetall(`parcel-recon:quota:${firstDay}`);
    expect(Object.fromEntries(Object.entries(ledger).map(([k, v]) => [k, Number(v)]))).toEqual({
      ...Object.fromEntries(aliases.map((a) => [a, PER_KEY])),
      '*': PER_KEY * aliases.length,
    });

    // Each worker staged and looked up the codes of its shard only; together, every code once.
    const staged: string[] = [];
    for (let i = 0; i < WORKERS; i++) {
      const shard = { index: i, count: WORKERS };
      const inputs = await codesIn(workerDb(dir, i), 'SELECT order_code FROM run_inputs');
      const looked = await codesIn(
        workerDb(dir, i),
        "SELECT order_code FROM lookup_results WHERE outcome <> 'deferred'",
      );
      expect(inputs.length).toBeGreaterThan(0);
      expect(looked.length).toBeGreaterThan(0);
      for (const code of [...inputs, ...looked]) expect(inShard(code, shard), code).toBe(true);
      const [run] = await queryFile<{ source: string }>(
        workerDb(dir, i),
        "SELECT source FROM runs WHERE job = 'nightly-track'",
      );
      expect(run!.source).toContain(`(shard ${i}/${WORKERS})`);
      staged.push(...inputs);
    }
    expect(staged.sort()).toEqual([...codes].sort());

    // Night two, with the limit raised to the codes per key: the codes deferred last night get looked up.
    await postControl(sandbox, '/_sandbox/clock', { advanceMs: DAY_MS });
    const second = await Promise.all((await configs(CODES_PER_KEY)).map((config) => runNightly(config)));
    for (const result of second) expect(result.code, result.stderr).toBe(0);
    const secondSeen = sandboxLookups(sandbox, today());
    for (const alias of aliases) expect(secondSeen[alias] ?? 0).toBeLessThanOrEqual(CODES_PER_KEY);

    const workerOrders: string[] = [];
    for (let i = 0; i < WORKERS; i++)
      workerOrders.push(...(await codesIn(workerDb(dir, i), 'SELECT order_code FROM orders')));
    expect(workerOrders.sort()).toEqual([...codes].sort());
    const merged = join(dir, 'merged.duckdb');
    const files = Array.from({ length: WORKERS }, (_, i) => workerDb(dir, i));
    const merge = await cli(['merge', ...files, '--into', merged], {});
    expect(merge.code, merge.stderr).toBe(0);
    expect((await codesIn(merged, 'SELECT order_code FROM orders')).sort()).toEqual([...codes].sort());
  });

  it('take a password-protected Redis from PARCEL_RECON_REDIS_URL and write its password nowhere', {
    timeout: 90_000,
  }, async () => {
    const password = 'quota-Secret-7Hq2';
    const guarded = await startRedis({ password });
    try {
      const dir = join(workspace.dir, 'guarded');
      // The configuration names the Redis without its password; the environment gives the whole URL.
      const config = await writeWorkerConfig(dir, 0, 2, { redis: guarded.url });
      const refused = await runNightly(config);
      expect(refused.code).toBe(1);
      // The log lines come first on stderr; the failure is told in one last line.
      const told = refused.stderr.split('\n').filter((line) => line.startsWith('parcel-recon:'));
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(
        new RegExp(`^parcel-recon: cannot reach Redis at redis://127\\.0\\.0\\.1:${guarded.port}: `),
      );

      const withPassword = `redis://:${password}@127.0.0.1:${guarded.port}`;
      const result = await runNightly(config, { PARCEL_RECON_REDIS_URL: withPassword });
      expect(result.code, result.stderr).toBe(0);
      expect(lookupsSpent(result)).toBeGreaterThan(0);
      const ledger = await guarded.client.hgetall(`parcel-recon:quota:${today()}`);
      expect(Number(ledger['*'])).toBe(lookupsSpent(result));

      const summary = JSON.parse(result.stdout) as JobSummary;
      const runs = await queryFile(workerDb(dir, 0), 'SELECT * FROM runs');
      for (const text of [
        refused.stdout,
        refused.stderr,
        result.stdout,
        result.stderr,
        await readFile(summary.summaryFile, 'utf8'),
        JSON.stringify(runs),
      ])
        expect(text).not.toContain(password);
    } finally {
      await guarded.stop();
    }
  });
});
