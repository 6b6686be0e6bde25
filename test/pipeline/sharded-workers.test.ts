import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { getJson, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv, startCli } from '../support/cli-process.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { COMPARED_TABLES, tableChecksums } from '../support/warehouse-checksums.js';

const WORKERS = 4;
const PER_KEY = 100;

type Usage = Record<
  string,
  { lookups: number; refused: number; perKey: Record<string, { lookups: number; refused: number }> }
>;

describe('four workers, one Redis, one merge', () => {
  let sandbox: RunningSandbox;
  let redis: RedisServer;
  let workspace: TrackingWorkspace;
  let env: Record<string, string>;
  let day: string;
  /** 100 codes per key, plus rows the carrier's rules reject. */
  let exactCsv: string;
  /** 150 codes per key. */
  let overCsv: string;
  let aliases: string[];

  /** Lookups the sandbox saw today per key (answered and refused). */
  const sandboxPerKey = async (): Promise<Record<string, number>> => {
    const usage = await getJson<Usage>(`${sandbox.url}/_sandbox/usage`);
    return Object.fromEntries(
      aliases.map((alias) => [
        alias,
        (usage[day]?.perKey[alias]?.lookups ?? 0) + (usage[day]?.perKey[alias]?.refused ?? 0),
      ]),
    );
  };
  const since = (after: Record<string, number>, before: Record<string, number>) =>
    Object.fromEntries(aliases.map((a) => [a, after[a]! - before[a]!]));
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  const workerArgs = (csv: string, dir: string, shard: number, extra: string[] = []) => [
    'track',
    '--input',
    csv,
    '--db',
    join(dir, `shard-${shard}.duckdb`),
    '--shard',
    `${shard}/${WORKERS}`,
    '--redis',
    redis.url,
    '--per-key-limit',
    String(PER_KEY),
    '--concurrency',
    '8',
    '--timeout-ms',
    '5000',
    '--json',
    '--no-progress',
    '--grace-ms',
    '1000',
    ...extra,
  ];
  const shardFiles = (dir: string) => Array.from({ length: WORKERS }, (_, i) => join(dir, `shard-${i}.duckdb`));
  const redisLedger = async () =>
    Object.fromEntries(
      Object.entries(await redis.client.hgetall(`parcel-recon:quota:${day}`)).map(([k, v]) => [k, Number(v)]),
    );

  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await startTestSandbox({
      ordersPerAccount: 150,
      historyDays: 3,
      faults: { latencyMinMs: 5, latencyMaxMs: 30 },
    });
    workspace = await trackingWorkspace();
    aliases = sandbox.state.world.accounts.map((a) => a.alias);
    const byAccount = new Map<string, string[]>();
    for (const plan of sandbox.state.world.orders())
      byAccount.set(plan.account.alias, [...(byAccount.get(plan.account.alias) ?? []), plan.code]);
    const rows = (perKey: number) =>
      [...byAccount].flatMap(([alias, codes]) => codes.slice(0, perKey).map((code) => [code, alias]));
    exactCsv = await workspace.writeCsv('exact.csv', [
      ['order_code', 'account'],
      ...rows(PER_KEY),
      ['BAD CODE!', aliases[0]!],
      ['', aliases[1]!],
    ]);
    overCsv = await workspace.writeCsv('over.csv', [['order_code', 'account'], ...rows(150)]);
    day = carrierDayOf(sandbox.state.clock.now());
    env = sandboxEnv(sandbox);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await redis?.stop();
    await workspace?.dispose();
  });

  beforeEach(async () => {
    await redis.client.flushall();
  });

  it('spend exactly 100 lookups per key, and merged equal a single-process run', { timeout: 90_000 }, async () => {
    const dir = join(workspace.dir, 'exact');
    await mkdir(dir);
    const before = await sandboxPerKey();
    const results = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) => cli(workerArgs(exactCsv, dir, i), env)),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(since(await sandboxPerKey(), before)).toEqual(Object.fromEntries(aliases.map((a) => [a, PER_KEY])));
    expect(await redisLedger()).toEqual({
      ...Object.fromEntries(aliases.map((a) => [a, PER_KEY])),
      '*': PER_KEY * aliases.length,
    });

    const merged = join(dir, 'merged.duckdb');
    const merge = await cli(['merge', ...shardFiles(dir), '--into', merged], {});
    expect(merge.code, merge.stderr).toBe(0);
    const single = await cli(
      [
        'track',
        '--input',
        exactCsv,
        '--db',
        join(dir, 'single.duckdb'),
        '--concurrency',
        '8',
        '--json',
        '--no-progress',
      ],
      env,
    );
    expect(single.code, single.stderr).toBe(0);
    const expected = await tableChecksums(join(dir, 'single.duckdb'), COMPARED_TABLES);
    expect(expected.orders!.rows).toBe(PER_KEY * aliases.length);
    expect(expected.run_inputs!.rows).toBe(PER_KEY * aliases.length + 2);
    expect(await tableChecksums(merged, COMPARED_TABLES)).toEqual(expected);

    // Merging again changes nothing; quota_usage holds the largest count any worker saw.
    const again = await cli(['merge', ...shardFiles(dir), '--into', merged, '--json'], {});
    expect(again.code, again.stderr).toBe(0);
    for (const file of (JSON.parse(again.stdout) as { merged: { rows: Record<string, number> }[] }).merged)
      expect(Object.values(file.rows).every((n) => n === 0)).toBe(true);
    expect(await tableChecksums(merged, COMPARED_TABLES)).toEqual(expected);
  });

  it('never spend past a global limit below the sum of the keys', { timeout: 60_000 }, async () => {
    const dir = join(workspace.dir, 'global');
    await mkdir(dir);
    const global = PER_KEY * aliases.length - 70;
    const before = await sandboxPerKey();
    const results = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) =>
        cli(workerArgs(overCsv, dir, i, ['--global-limit', String(global)]), env),
      ),
    );
    // A worker whose shard fits in what the others left finishes (0); the others defer the rest (3).
    for (const result of results) expect([0, 3], result.stderr).toContain(result.code);
    expect(results.some((r) => r.code === 3)).toBe(true);
    const seen = since(await sandboxPerKey(), before);
    for (const alias of aliases) expect(seen[alias]).toBeLessThanOrEqual(PER_KEY);
    // The ledger reaches the global limit and stops there; the sandbox saw every lookup counted (none failed here).
    const ledger = await redisLedger();
    expect(ledger['*']).toBe(global);
    expect(sum(seen)).toBe(global);
  });

  it('a worker killed with SIGKILL: the others finish, its shard rerun completes within the limits', {
    timeout: 90_000,
  }, async () => {
    const dir = join(workspace.dir, 'killed');
    await mkdir(dir);
    const limit = ['--per-key-limit', '130'];
    const before = await sandboxPerKey();
    const children = Array.from({ length: WORKERS }, (_, i) =>
      startCli(workerArgs(exactCsv, dir, i, [...limit, '--concurrency', '2']), env),
    );
    // Kill shard 0 once the sandbox has seen a share of the work.
    const deadline = performance.now() + 30_000;
    while (sum(since(await sandboxPerKey(), before)) < 60 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(children[0]!.exitCode).toBeNull();
    children[0]!.kill('SIGKILL');
    const ended: CliResult[] = await Promise.all(children.map((c) => c.ended));
    expect(children[0]!.signalCode).toBe('SIGKILL');
    for (const result of ended.slice(1)) expect(result.code, result.stderr).toBe(0);
    const rerun = await cli(workerArgs(exactCsv, dir, 0, limit), env);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ resumed: true });
    const seen = since(await sandboxPerKey(), before);
    const ledger = await redisLedger();
    for (const alias of aliases) {
      expect(seen[alias]).toBeLessThanOrEqual(130);
      expect(ledger[alias]).toBeGreaterThanOrEqual(seen[alias]!);
    }
    const merged = join(dir, 'merged.duckdb');
    expect((await cli(['merge', ...shardFiles(dir), '--into', merged], {})).code).toBe(0);
    expect((await tableChecksums(merged, { orders: [] })).orders!.rows).toBe(PER_KEY * aliases.length);
  });

  it('Redis restarted mid-run: workers finish or stop with exit 3, and the quota is never exceeded', {
    timeout: 90_000,
  }, async () => {
    const dir = join(workspace.dir, 'restart');
    await mkdir(dir);
    const before = await sandboxPerKey();
    const children = Array.from({ length: WORKERS }, (_, i) =>
      startCli(workerArgs(overCsv, dir, i, ['--concurrency', '2']), env),
    );
    const deadline = performance.now() + 30_000;
    while (sum(since(await sandboxPerKey(), before)) < 60 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await redis.restart();
    const ended = await Promise.all(children.map((c) => c.ended));
    for (const result of ended) {
      expect([0, 3], result.stderr).toContain(result.code);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(ended.some((r) => r.code === 3 && r.stderr.includes('lost the connection to Redis'))).toBe(true);
    // Reruns against the restarted Redis finish the work up to the limits.
    const reruns = await Promise.all(Array.from({ length: WORKERS }, (_, i) => cli(workerArgs(overCsv, dir, i), env)));
    for (const result of reruns) expect([0, 3], result.stderr).toContain(result.code);
    // Lookups abandoned when Redis went away were counted and perhaps never sent: the sandbox saw at most the limit.
    const seen = since(await sandboxPerKey(), before);
    const ledger = await redisLedger();
    for (const alias of aliases) {
      expect(seen[alias]).toBeLessThanOrEqual(PER_KEY);
      expect(ledger[alias]).toBe(PER_KEY);
    }
  });

  it("Redis's script cache flushed mid-run (as a restart empties it): workers go on and finish", {
    timeout: 60_000,
  }, async () => {
    const dir = join(workspace.dir, 'noscript');
    await mkdir(dir);
    const before = await sandboxPerKey();
    const children = Array.from({ length: WORKERS }, (_, i) =>
      startCli(workerArgs(exactCsv, dir, i, ['--concurrency', '2']), env),
    );
    const deadline = performance.now() + 30_000;
    while (sum(since(await sandboxPerKey(), before)) < 60 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(children.every((c) => c.exitCode === null)).toBe(true);
    // The ledger's and Bottleneck's scripts are gone: their next EVALSHA gets NOSCRIPT.
    await redis.client.script('FLUSH');
    const ended = await Promise.all(children.map((c) => c.ended));
    for (const result of ended) expect(result.code, result.stderr).toBe(0);
    expect(since(await sandboxPerKey(), before)).toEqual(Object.fromEntries(aliases.map((a) => [a, PER_KEY])));
  });

  it('Redis down at the start: one line, exit 1, nothing spent', async () => {
    const before = await sandboxPerKey();
    const result = await cli(
      ['track', '--input', exactCsv, '--db', join(workspace.dir, 'down.duckdb'), '--no-progress'],
      { ...env, PARCEL_RECON_REDIS_URL: 'redis://user:secret@127.0.0.1:1' },
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('cannot reach Redis at redis://127.0.0.1:1');
    expect(result.stderr).not.toContain('secret');
    expect(await sandboxPerKey()).toEqual(before);
  });
});
