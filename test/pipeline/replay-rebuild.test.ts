import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { DAY_MS, HOUR_MS, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { NORMALIZED_TABLES, tableChecksums } from '../support/warehouse-checksums.js';

/** Every column of the tables a rebuild replaces, the audit rows with them. */
const ORDER_TABLES = Object.fromEntries([...NORMALIZED_TABLES, 'order_charge_audit'].map((table) => [table, []]));
/** Small batches: each night's spool is several files, so one can be torn while the others are whole. */
const BATCH = 15;

interface RebuildJson {
  dryRun: boolean;
  unreadableFiles: { path: string; cause: string }[];
  rebuild: { rebuilt: number; keptWithoutAnswers: number; keptPartlyRead: number };
}

/** A failure or warning as a user meets it: no stack trace anywhere in the output. */
function expectNoStack(result: CliResult): void {
  expect(result.stdout).not.toContain('    at ');
  expect(result.stderr).not.toContain('    at ');
}

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

describe('replay --rebuild keeps every order whose spooled answers it cannot read whole', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let live: string;
  let liveSums: Awaited<ReturnType<typeof tableChecksums>>;
  let orders: number;
  let nights: string[];
  let newInSecondNight: number;
  let afterNights: Record<string, string>;

  /** A copy of the live warehouse in its own folder, with the raw spool or without. */
  async function copyOfLive(name: string, withSpool: boolean): Promise<string> {
    const dir = join(workspace.dir, name);
    await mkdir(dir);
    await cp(live, join(dir, 'recon.duckdb'));
    if (withSpool) await cp(join(workspace.dir, 'live', 'raw'), join(dir, 'raw'), { recursive: true });
    return join(dir, 'recon.duckdb');
  }

  const rebuild = (db: string, ...more: string[]) => cli(['replay', '--rebuild', '--db', db, ...more], {});

  beforeAll(async () => {
    // Latency and few lookups in flight: answers come in over time, so a night commits several batches.
    sandbox = await startTestSandbox({
      ordersPerAccount: 40,
      historyDays: 3,
      lifecycle: { failedAttemptRate: 0.5 },
      faults: { latencyMinMs: 5, latencyMaxMs: 20 },
    });
    workspace = await trackingWorkspace();
    await mkdir(join(workspace.dir, 'live'));
    live = join(workspace.dir, 'live', 'recon.duckdb');
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
    // The first night knows two thirds of the orders, the second all of them: after the first night's
    // spool is pruned, the orders first seen the second night are the ones whose answers are all spooled.
    const firstNightCodes = codes.slice(0, Math.floor((codes.length * 2) / 3));
    newInSecondNight = codes.length - firstNightCodes.length;
    const header = ['order_code', 'account'] as const;
    const inputs = [
      await workspace.writeCsv('night-1.csv', [header, ...firstNightCodes]),
      await workspace.writeCsv('night-2.csv', [header, ...codes]),
    ];
    nights = [];
    for (const input of inputs) {
      const tracked = await cli(
        [
          'track',
          '--input',
          input,
          '--db',
          live,
          '--json',
          '--no-progress',
          '--batch-size',
          String(BATCH),
          '--concurrency',
          '4',
        ],
        sandboxEnv(sandbox),
      );
      expect(tracked.code, tracked.stderr).toBe(0);
      nights.push((JSON.parse(tracked.stdout) as { runId: string }).runId);
      sandbox.state.clock.advance(DAY_MS);
    }
    afterNights = sandboxEnv(sandbox);
    liveSums = await tableChecksums(live, ORDER_TABLES);
    orders = liveSums.orders!.rows;
    expect(orders).toBe(codes.length);
    expect(liveSums.order_changes!.rows).toBeGreaterThan(0);
    expect(liveSums.delivery_failures!.rows).toBeGreaterThan(0);
  }, 180_000);

  afterAll(async () => {
    await sandbox?.stop();
    await workspace?.dispose();
  });

  it('with no raw spool, keeps every order, says so and exits 0', async () => {
    const db = await copyOfLive('no-spool', false);
    const result = await rebuild(db);
    expect(await tableChecksums(db, ORDER_TABLES)).toEqual(liveSums);
    expect(result.code, result.stderr).toBe(0);
    expectNoStack(result);
    expect(result.stdout).toContain('nothing replayed');
    expect(result.stdout).toContain(`kept ${orders} orders as they were: ${orders} with no answer in a readable spool`);
  });

  it('removes the rebuild folder a killed replay left, and keeps one a live process is using', async () => {
    const db = await copyOfLive('abandoned', false);
    const spool = join(db, '..', 'spool');
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    const left = join(spool, `replay-rebuild-${ended}`);
    const inUse = join(spool, `replay-rebuild-${process.pid}`);
    for (const folder of [left, inUse]) {
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, 'rebuild.duckdb'), 'left behind');
    }
    const result = await rebuild(db, '--dry-run');
    expect(result.code, result.stderr).toBe(0);
    expect(await readdir(spool)).toEqual([`replay-rebuild-${process.pid}`]);
  });

  it('with a torn spool file, names it in one line, keeps the orders it may hold, rebuilds the rest and exits 1', async () => {
    const db = await copyOfLive('torn', true);
    // A file of the night whose spool has the most files, so that whole files of it are read beside the torn one.
    const spools = await Promise.all(
      nights.map(async (night) => {
        const folder = join(workspace.dir, 'torn', 'raw', night);
        return (await readdir(folder)).sort().map((name) => join(folder, name));
      }),
    );
    const files = spools.reduce((most, spool) => (spool.length > most.length ? spool : most));
    expect(files.length).toBeGreaterThan(1);
    const torn = files[1]!;
    await truncate(torn, Math.floor((await readFile(torn)).length / 2));

    const result = await rebuild(db);
    expect(await tableChecksums(db, ORDER_TABLES)).toEqual(liveSums);
    expect(result.code, result.stderr).toBe(1);
    expectNoStack(result);
    const unreadable = result.stdout.split('\n').filter((line) => line.includes(torn));
    expect(unreadable).toEqual([expect.stringMatching(/cannot be read \(.*unexpected end of file.*\)/)]);

    // What a dry run plans is what was done; it changes nothing.
    const planned = await rebuild(db, '--dry-run', '--json');
    expect(planned.code, planned.stderr).toBe(1);
    const plan = JSON.parse(planned.stdout) as RebuildJson;
    expect(plan.dryRun).toBe(true);
    expect(plan.unreadableFiles).toEqual([{ path: torn, cause: expect.stringContaining('unexpected end of file') }]);
    // The torn file's orders keep their rows; every other order's answers are all read.
    // (With no other answer, an order of the torn file is one with no answer in a readable spool.)
    expect(plan.rebuild.keptPartlyRead + plan.rebuild.keptWithoutAnswers).toBeGreaterThan(0);
    expect(plan.rebuild.rebuilt).toBeGreaterThan(0);
    expect(plan.rebuild.rebuilt + plan.rebuild.keptPartlyRead + plan.rebuild.keptWithoutAnswers).toBe(orders);
    expect(result.stdout).toContain(`rebuilt ${plan.rebuild.rebuilt} orders`);
    expect(result.stdout).toContain(
      `kept ${orders - plan.rebuild.rebuilt} orders as they were: ${plan.rebuild.keptWithoutAnswers} with no answer in a readable spool, ${plan.rebuild.keptPartlyRead} with some answers`,
    );
    expect(await tableChecksums(db, ORDER_TABLES)).toEqual(liveSums);
  });

  it('after prune removed the first night’s spool, rebuilds only the orders first seen the second night', async () => {
    const db = await copyOfLive('pruned', true);
    const later = {
      ...afterNights,
      PARCEL_RECON_NOW: new Date(sandbox.state.clock.now() - DAY_MS + HOUR_MS).toISOString(),
    };
    const pruned = await cli(['prune', '--older-than', '1d', '--db', db, '--json'], later);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ runsPruned: 1, rawSpool: { folders: 1 } });
    expect(await readdir(join(workspace.dir, 'pruned', 'raw'))).toEqual([nights[1]]);

    const result = await rebuild(db, '--json');
    expect(await tableChecksums(db, ORDER_TABLES)).toEqual(liveSums);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as RebuildJson;
    expect(summary.rebuild).toEqual({
      rebuilt: newInSecondNight,
      keptWithoutAnswers: expect.any(Number),
      keptPartlyRead: expect.any(Number),
    });
    expect(summary.rebuild.keptWithoutAnswers + summary.rebuild.keptPartlyRead).toBe(orders - newInSecondNight);
  });

  it('with every spool whole, rebuilds every order into the live tables, even rows changed since', async () => {
    const db = await copyOfLive('whole', true);
    const changed = await Warehouse.open(db);
    try {
      // What a rebuild is for: rows the spools would give otherwise now (a fault, a fixed loader).
      await changed.run("UPDATE orders SET status_name = 'changed since', delay_note = NULL");
      await changed.run('DELETE FROM order_changes WHERE order_code IN (SELECT order_code FROM order_changes LIMIT 3)');
    } finally {
      await changed.close();
    }
    expect(await tableChecksums(db, ORDER_TABLES)).not.toEqual(liveSums);
    const result = await rebuild(db, '--json');
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as RebuildJson).rebuild).toEqual({
      rebuilt: orders,
      keptWithoutAnswers: 0,
      keptPartlyRead: 0,
    });
    expect(await tableChecksums(db, ORDER_TABLES)).toEqual(liveSums);
  });

  it('--dry-run of replay, merge, prune and upgrade tells what would change and leaves the files as they were', async () => {
    const db = await copyOfLive('dry-run', true);
    const other = await copyOfLive('dry-run-other', false);
    // Orders the other warehouse holds and this one not: what a merge would bring.
    const missing = 5;
    const lessened = await Warehouse.open(db);
    try {
      await lessened.run(
        `CREATE TEMP TABLE gone AS SELECT order_code FROM orders ORDER BY order_code LIMIT ${missing};
         DELETE FROM order_charges WHERE order_code IN (SELECT order_code FROM gone);
         DELETE FROM orders WHERE order_code IN (SELECT order_code FROM gone)`,
      );
    } finally {
      await lessened.close();
    }
    const before = await sha256(db);
    const otherBefore = await sha256(other);

    const replayed = await rebuild(db, '--dry-run');
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toContain(`would rebuild ${orders} orders`);
    const loaded = await cli(['replay', '--db', db, '--dry-run', '--json'], {});
    expect(loaded.code, loaded.stderr).toBe(0);
    const loadPlan = JSON.parse(loaded.stdout) as { dryRun: boolean; runs: { snapshots: number }[]; rebuild: null };
    expect(loadPlan).toMatchObject({ dryRun: true, rebuild: null });
    expect(loadPlan.runs.map((run) => run.snapshots).reduce((a, b) => a + b)).toBeGreaterThanOrEqual(orders);

    const merged = await cli(['merge', other, '--into', db, '--dry-run', '--json'], {});
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout)).toMatchObject({
      dryRun: true,
      merged: [{ path: other, rows: { orders: missing, order_changes: 0, quota_usage: 0 } }],
    });

    const muchLater = {
      ...afterNights,
      PARCEL_RECON_NOW: new Date(sandbox.state.clock.now() + 2 * DAY_MS).toISOString(),
    };
    const pruned = await cli(['prune', '--older-than', '1d', '--db', db, '--dry-run', '--json'], muchLater);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ dryRun: true, runsPruned: 2 });

    const upgraded = await cli(['upgrade', '--db', db, '--dry-run', '--json'], {});
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(JSON.parse(upgraded.stdout)).toMatchObject({ dryRun: true, pending: [] });

    expect(await sha256(db)).toBe(before);
    expect(await sha256(other)).toBe(otherBefore);
    // The rebuild's own warehouse, built in the data folder's spool, is gone.
    expect(await readdir(join(workspace.dir, 'dry-run', 'spool'))).toEqual([]);
    expect(await readdir(join(workspace.dir, 'dry-run', 'raw'))).toEqual([...nights].sort());
  });
});
