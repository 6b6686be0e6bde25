import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

/** track's default: attempts in a row without an answer after which a run stops sending. */
const BREAKER_ATTEMPTS = 50;
const CODES = 180;

interface Summary {
  readonly runId: string;
  readonly exitState: string;
  readonly lookupsSpent: number;
  readonly carrierDown: string | null;
  readonly counters: {
    readonly ok: number;
    readonly transportErrors: number;
    readonly deferred: number;
    readonly deferredByReason: Record<string, number>;
  };
}

describe('a carrier that is down spends no quota and stops the run', () => {
  let sandbox: RunningSandbox;
  let redis: RedisServer;
  let workspace: TrackingWorkspace;
  let csv: string;
  let env: Record<string, string>;
  let day: string;
  let closedUrl: string;

  /** Lookups the sandbox counted today: every request that reached it. */
  const sandboxLookups = () => {
    const usage = sandbox.state.quota.usage()[day];
    return (usage?.lookups ?? 0) + (usage?.refused ?? 0);
  };

  const track = async (db: string, trackingUrl: string, extra: string[] = []) => {
    const result = await cli(
      ['track', '--input', csv, '--db', db, '--tracking-url', trackingUrl, '--json', '--no-progress', ...extra],
      env,
    );
    return { ...result, summary: JSON.parse(result.stdout) as Summary };
  };

  /** The warehouse's ledger of the day and what the run recorded of each order's attempts. */
  const stored = async (db: string, runId: string) => {
    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      const read = async (sql: string) => (await warehouse.connection.runAndReadAll(sql)).getRowObjectsJson();
      const ledger = await read(
        `SELECT key_alias, CAST(lookups AS INTEGER) AS lookups FROM quota_usage WHERE carrier_day = DATE '${day}'`,
      );
      const [attempts] = await read(
        `SELECT CAST(sum(attempts) AS INTEGER) AS attempts FROM lookup_results WHERE run_id = '${runId}'`,
      );
      return {
        ledger: Object.fromEntries(ledger.map((row) => [row.key_alias as string, Number(row.lookups)])),
        attempts: Number(attempts!.attempts),
      };
    } finally {
      await warehouse.close();
    }
  };

  /** The one line the run ends with on stderr (the rest of stderr is the log, as JSON lines). */
  const endLine = (result: CliResult) => result.stderr.split('\n').filter((line) => line.startsWith('parcel-recon:'));

  const expectDeferredThenTakenUp = async (db: string, broken: Summary, extra: string[] = []) => {
    expect(broken.exitState).toBe('failed');
    expect(broken.counters).toMatchObject({ ok: 0, transportErrors: 0, deferred: CODES });
    expect(broken.counters.deferredByReason).toEqual({ carrier_down: CODES });
    const live = await track(db, sandbox.url, extra);
    expect(live.code, live.stderr).toBe(0);
    expect(live.summary.counters).toMatchObject({ ok: CODES, deferred: 0, transportErrors: 0 });
    expect(live.summary.carrierDown).toBeNull();
    return live.summary;
  };

  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await startTestSandbox({ ordersPerAccount: CODES / 3, historyDays: 3 });
    workspace = await trackingWorkspace();
    csv = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...[...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias]),
    ]);
    env = sandboxEnv(sandbox);
    day = carrierDayOf(sandbox.state.clock.now());
    // A port found free and listened on by nobody: every connection to it is refused.
    closedUrl = `http://127.0.0.1:${await freePort()}`;
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await redis?.stop();
    await workspace?.dispose();
  });

  beforeEach(() => {
    sandbox.state.faults.configure({ serverErrorRate: 0 });
  });

  it('refused connections leave the ledger at 0, exit 1 after at most 50 attempts, and defer every order', async () => {
    const db = join(workspace.dir, 'refused.duckdb');
    const result = await track(db, closedUrl);

    expect(result.code, result.stderr).toBe(1);
    expect(endLine(result)).toHaveLength(1);
    expect(endLine(result)[0]).toMatch(/^parcel-recon: carrier unreachable: .*ECONNREFUSED/);
    expect(result.summary.lookupsSpent).toBe(0);
    const { ledger, attempts } = await stored(db, result.summary.runId);
    expect(attempts).toBeGreaterThan(0);
    expect(attempts).toBeLessThanOrEqual(BREAKER_ATTEMPTS);
    expect(Object.values(ledger).every((lookups) => lookups === 0)).toBe(true);

    const before = sandboxLookups();
    const live = await expectDeferredThenTakenUp(db, result.summary);
    // The whole day's quota was left for the run against the live carrier, which spent one lookup per order.
    expect(sandboxLookups() - before).toBe(CODES);
    expect((await stored(db, live.runId)).ledger['*']).toBe(CODES);
  });

  it('5xx answers are spent, and the run exits 1 after at most 50 of them', async () => {
    const db = join(workspace.dir, 'failing.duckdb');
    sandbox.state.faults.configure({ serverErrorRate: 1 });
    const before = sandboxLookups();
    const result = await track(db, sandbox.url);

    expect(result.code, result.stderr).toBe(1);
    expect(endLine(result)).toHaveLength(1);
    expect(endLine(result)[0]).toMatch(/^parcel-recon: carrier failing: .*the carrier answered HTTP 50[023]$/);
    const reached = sandboxLookups() - before;
    expect(reached).toBeGreaterThan(0);
    expect(reached).toBeLessThanOrEqual(BREAKER_ATTEMPTS);
    // Each request was answered, if with a 5xx: each is spent.
    const { ledger, attempts } = await stored(db, result.summary.runId);
    expect(attempts).toBe(reached);
    expect(result.summary.lookupsSpent).toBe(reached);
    expect(ledger['*']).toBe(reached);

    sandbox.state.faults.configure({ serverErrorRate: 0 });
    await expectDeferredThenTakenUp(db, result.summary);
  });

  it('with a ledger shared in Redis, refused connections give every reservation back there', async () => {
    const db = join(workspace.dir, 'shared.duckdb');
    const shared = ['--redis', redis.url, '--breaker-attempts', '20', '--concurrency', '8'];
    const redisLedger = async () =>
      Object.fromEntries(
        Object.entries(await redis.client.hgetall(`parcel-recon:quota:${day}`)).map(([k, v]) => [k, Number(v)]),
      );
    const result = await track(db, closedUrl, shared);

    expect(result.code, result.stderr).toBe(1);
    expect(endLine(result)[0]).toMatch(/^parcel-recon: carrier unreachable: none of the last 20 attempts/);
    const { ledger, attempts } = await stored(db, result.summary.runId);
    expect(attempts).toBeGreaterThan(0);
    expect(attempts).toBeLessThanOrEqual(20);
    expect(Object.values(await redisLedger()).every((lookups) => lookups === 0)).toBe(true);
    expect(Object.values(ledger).every((lookups) => lookups === 0)).toBe(true);

    await expectDeferredThenTakenUp(db, result.summary, shared);
    expect((await redisLedger())['*']).toBe(CODES);
  });

  it("stops the nightly job's tracking step after track.breakerAttempts, naming the cause", async () => {
    const db = join(workspace.dir, 'nightly.duckdb');
    const config = join(workspace.dir, 'outage.config.json');
    await writeFile(
      config,
      JSON.stringify({
        warehouse: db,
        trackingUrl: closedUrl,
        source: { inputs: [csv] },
        track: { breakerAttempts: 10 },
      }),
    );
    // The configuration's tracking URL, not the environment's.
    const { PARCEL_RECON_TRACKING_URL: _, ...jobEnv } = env;
    const result = await cli(['jobs', 'run', 'nightly', '--config', config], jobEnv);

    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(
      /^ {2}track: exit 1, carrier unreachable: none of the last 10 attempts got an answer/m,
    );
    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      const [row] = (
        await warehouse.connection.runAndReadAll(
          `SELECT CAST(sum(attempts) AS INTEGER) AS attempts, count(*) FILTER (WHERE error_code = 'CARRIER_DOWN') AS deferred,
                  (SELECT CAST(coalesce(sum(lookups), 0) AS INTEGER) FROM quota_usage) AS spent
           FROM lookup_results`,
        )
      ).getRowObjectsJson();
      expect(Number(row!.attempts)).toBeLessThanOrEqual(10);
      expect(Number(row!.deferred)).toBe(CODES);
      expect(Number(row!.spent)).toBe(0);
    } finally {
      await warehouse.close();
    }
  });
});
