import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { SeededRandom } from '../../src/sandbox/world/seeded-random.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { getJson, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv, startCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

/** Lookups in flight at once (--concurrency): all a kill may cost again. */
const IN_FLIGHT = 4;
/** Large batches: a kill finds many answers received and not committed. */
const BATCH = 50;
const KILL_SEED = Number(process.env.PARCEL_RECON_KILL_SEED ?? 20261125);
const KILLS = 3;

describe('a run killed at any moment and resumed', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let codes: string[];
  let env: Record<string, string>;
  let day: string;
  const sandboxSeen = async () => {
    const usage = await getJson<Record<string, { lookups: number; refused: number }>>(`${sandbox.url}/_sandbox/usage`);
    return (usage[day]?.lookups ?? 0) + (usage[day]?.refused ?? 0);
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      ordersPerAccount: 60,
      historyDays: 3,
      faults: { latencyMinMs: 40, latencyMaxMs: 100 },
    });
    workspace = await trackingWorkspace();
    day = carrierDayOf(sandbox.state.clock.now());
    env = sandboxEnv(sandbox);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('loads the answers the killed processes received: lookups repeat at most what was in flight at each kill', {
    timeout: 120_000,
  }, async () => {
    const orders = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
    codes = orders.map(([code]) => code);
    const csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...orders]);
    const db = join(workspace.dir, 'recon.duckdb');
    const args = [
      'track',
      '--input',
      csv,
      '--db',
      db,
      '--json',
      '--no-progress',
      '--concurrency',
      String(IN_FLIGHT),
      '--batch-size',
      String(BATCH),
    ];
    const seenBefore = await sandboxSeen();
    const random = new SeededRandom(KILL_SEED);
    for (let kill = 0; kill < KILLS; kill++) {
      const child = startCli(args, env);
      // A seeded share of the lookups still to do, counted by the sandbox: a point in the work, not in time.
      const seenAtStart = await sandboxSeen();
      const stillToDo = Math.max(KILLS * 10, codes.length - (seenAtStart - seenBefore));
      const killAt = seenAtStart + Math.max(1, Math.floor(stillToDo * (0.1 + 0.25 * random.fraction())));
      const deadline = performance.now() + 60_000;
      while ((await sandboxSeen()) < killAt && child.exitCode === null && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 5));
      expect(child.exitCode, `process ${kill + 1} ended before its kill`).toBeNull();
      child.kill('SIGKILL');
      await child.ended;
      expect(child.signalCode).toBe('SIGKILL');
    }
    const resumed = await cli(args, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ resumed: true });
    expect(await readdir(join(workspace.dir, 'spool'))).toEqual([]);

    const lookups = (await sandboxSeen()) - seenBefore;
    expect(lookups).toBeGreaterThanOrEqual(codes.length);
    expect(lookups - codes.length).toBeLessThanOrEqual(KILLS * IN_FLIGHT);

    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      const rows = (
        await warehouse.connection.runAndReadAll(
          `SELECT order_code, count(*) AS results, min(outcome) AS outcome FROM lookup_results GROUP BY order_code ORDER BY order_code`,
        )
      ).getRowObjectsJS();
      expect(rows.map((row) => row.order_code)).toEqual([...codes].sort());
      expect(rows.every((row) => row.results === 1n && row.outcome === 'ok')).toBe(true);
      const runs = (await warehouse.connection.runAndReadAll('SELECT exit_state FROM runs')).getRowObjectsJS();
      expect(runs).toEqual([{ exit_state: 'ok' }]);
      const orderRows = (
        await warehouse.connection.runAndReadAll('SELECT count(*) AS n FROM orders')
      ).getRowObjectsJS();
      expect(orderRows[0]!.n).toBe(BigInt(codes.length));
    } finally {
      await warehouse.close();
    }
  });
});
