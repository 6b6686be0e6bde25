import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import { replayRuns } from '../../src/pipeline/tracking/replay-runs.js';
import { MAX_RESERVATION_GROWTH } from '../../src/quota/quota-ledger.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { SeededRandom } from '../../src/sandbox/world/seeded-random.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { getJson, postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, logLine, sandboxEnv, startCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { COMPARED_TABLES, NORMALIZED_TABLES, tableChecksums } from '../support/warehouse-checksums.js';

/** Lookups in flight at once (--concurrency): what the ledger may count ahead of the carrier per interruption. */
const IN_FLIGHT = 4;
const BATCH = 10;
const KILL_SEED = Number(process.env.PARCEL_RECON_KILL_SEED ?? 20261123);

async function ledgerTotal(dbPath: string, day: string): Promise<number> {
  const warehouse = await Warehouse.open(dbPath, { readOnly: true });
  try {
    const reader = await warehouse.connection.runAndReadAll(
      `SELECT lookups FROM quota_usage WHERE carrier_day = '${day}' AND key_alias = '*'`,
    );
    return Number(reader.getRowObjectsJS()[0]?.lookups ?? 0);
  } finally {
    await warehouse.close();
  }
}

async function replayInto(dbPath: string, dataDir: string, runIds: string[]): Promise<void> {
  const warehouse = await Warehouse.open(dbPath);
  try {
    await replayRuns({ warehouse, dataDir, runIds, rebuild: false, logger: pino({ level: 'silent' }) });
  } finally {
    await warehouse.close();
  }
}

describe('a run killed and resumed, a replayed spool, signals and a second process', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let csv: string;
  let day: string;
  let env: Record<string, string>;
  const sandboxSeen = async () => {
    const usage = await getJson<Record<string, { lookups: number; refused: number }>>(`${sandbox.url}/_sandbox/usage`);
    return (usage[day]?.lookups ?? 0) + (usage[day]?.refused ?? 0);
  };
  const trackArgs = (db: string) => [
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
    '--grace-ms',
    '2000',
  ];

  beforeAll(async () => {
    // A fixed clock, so every run sees the same carrier state; latency, so a run lasts long enough to be killed.
    sandbox = await startTestSandbox({
      ordersPerAccount: 50,
      historyDays: 3,
      lifecycle: { failedAttemptRate: 0.5 },
      faults: { latencyMinMs: 40, latencyMaxMs: 100 },
    });
    workspace = await trackingWorkspace();
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
    csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...codes]);
    day = carrierDayOf(sandbox.state.clock.now());
    env = sandboxEnv(sandbox);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('ends, after SIGKILL at three seeded points and resumes, with the tables of an uninterrupted run, and a ledger within the reservation bound per kill', {
    timeout: 120_000,
  }, async () => {
    const whole = join(workspace.dir, 'whole');
    const killed = join(workspace.dir, 'killed');
    await Promise.all([mkdir(whole), mkdir(killed)]);

    const uninterrupted = await cli(trackArgs(join(whole, 'recon.duckdb')), env);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    const baseline = await tableChecksums(join(whole, 'recon.duckdb'), COMPARED_TABLES);
    expect(baseline.orders!.rows).toBeGreaterThan(100);

    const killedDb = join(killed, 'recon.duckdb');
    const seenBefore = await sandboxSeen();
    const random = new SeededRandom(KILL_SEED);
    let overCount = 0;
    for (let kill = 0; kill < 3; kill++) {
      const child = startCli(trackArgs(killedDb), env);
      // Once the run has the warehouse, after a seeded share (5% to 45%) of the lookups still to do, counted
      // by the sandbox: a point in the work, not in time, so a slow or fast machine kills at the same stage.
      await logLine(child, 'run ');
      const seenAtStart = await sandboxSeen();
      const stillToDo = Math.max(10, baseline.orders!.rows - (seenAtStart - seenBefore));
      const killAt = seenAtStart + Math.max(1, Math.floor(stillToDo * (0.05 + 0.4 * random.fraction())));
      const deadline = performance.now() + 60_000;
      while ((await sandboxSeen()) < killAt && child.exitCode === null && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(child.exitCode, `process ${kill + 1} ended before its kill`).toBeNull();
      child.kill('SIGKILL');
      const ended = await child.ended;
      expect(child.signalCode).toBe('SIGKILL');
      expect(ended.stdout).toBe('');
      const over = (await ledgerTotal(killedDb, day)) - ((await sandboxSeen()) - seenBefore);
      expect(over).toBeGreaterThanOrEqual(overCount);
      // Reserved ahead and unspent: the in-flight limit, grown at most MAX_RESERVATION_GROWTH times when lookups outran the ledger's writes.
      expect(over - overCount).toBeLessThanOrEqual(IN_FLIGHT * MAX_RESERVATION_GROWTH);
      overCount = over;
    }
    const resumed = await cli(trackArgs(killedDb), env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout) as { resumed: boolean; runId: string; counters: { ok: number } };
    expect(summary.resumed).toBe(true);
    expect(resumed.stderr).toContain('run resumed');
    // The killed runs left their work list and batch files; the finished run removes its scratch folder.
    expect(await readdir(join(whole, 'spool'))).toEqual([]);
    expect(await readdir(join(killed, 'spool'))).toEqual([]);

    expect(await tableChecksums(killedDb, COMPARED_TABLES)).toEqual(baseline);
    const sandboxSaw = (await sandboxSeen()) - seenBefore;
    const ledger = await ledgerTotal(killedDb, day);
    expect(ledger).toBeGreaterThanOrEqual(sandboxSaw);
    expect(ledger - sandboxSaw).toBe(overCount);
    // Committed results were not looked up again: beyond one lookup per order, at each kill at most what was
    // in flight and the results gathering for a commit (one batch, and the one being committed).
    expect(sandboxSaw).toBeLessThanOrEqual(baseline.orders!.rows + 3 * (IN_FLIGHT + 2 * BATCH));

    // Replaying the uninterrupted run's spool into an empty warehouse gives its tables, with no lookup.
    const replayedDb = join(workspace.dir, 'replayed.duckdb');
    const seenBeforeReplay = await sandboxSeen();
    const replayed = await cli(['replay', '--db', replayedDb, '--data-dir', whole, '--json'], {});
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ lookups: 0, runs: [{ snapshots: baseline.orders!.rows }] });
    const normalized = Object.fromEntries(NORMALIZED_TABLES.map((table) => [table, []]));
    const live = await tableChecksums(join(whole, 'recon.duckdb'), normalized);
    expect(await tableChecksums(replayedDb, normalized)).toEqual(live);
    // Again: the same tables.
    await replayInto(replayedDb, whole, []);
    expect(await tableChecksums(replayedDb, normalized)).toEqual(live);
    // The killed run's spool too. It may hold an answer received but never committed, then received
    // again: the replay saw the order first then, so only when it was seen may differ.
    const replayedKilledDb = join(workspace.dir, 'replayed-killed.duckdb');
    await replayInto(replayedKilledDb, killed, [summary.runId]);
    const normalizedUntimed = Object.fromEntries(NORMALIZED_TABLES.map((table) => [table, COMPARED_TABLES[table]!]));
    expect(await tableChecksums(replayedKilledDb, normalizedUntimed)).toEqual(
      await tableChecksums(killedDb, normalizedUntimed),
    );
    expect(await sandboxSeen()).toBe(seenBeforeReplay);
  });

  it('stops on SIGTERM within the grace time, commits what was done and exits 3', async () => {
    const db = join(workspace.dir, 'stopped.duckdb');
    const child = startCli(trackArgs(db), env);
    await logLine(child, 'inputs staged');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(child.exitCode).toBeNull();
    const signalled = performance.now();
    child.kill('SIGTERM');
    const ended: CliResult = await child.ended;
    expect(performance.now() - signalled).toBeLessThan(2_000 + 5_000);
    expect(ended.code, ended.stderr).toBe(3);
    const summary = JSON.parse(ended.stdout) as {
      exitState: string;
      counters: { ok: number; deferredByReason: Record<string, number> };
    };
    expect(summary.exitState).toBe('partial');
    expect(summary.counters.ok).toBeGreaterThan(0);
    expect(summary.counters.deferredByReason.stopping).toBeGreaterThan(0);
    const stopped = await Warehouse.open(db, { readOnly: true });
    try {
      const runs = (
        await stopped.connection.runAndReadAll(
          `SELECT exit_state, exit_code, (SELECT count(*) FROM lookup_results WHERE outcome = 'ok') AS ok,
                (SELECT count(*) FROM lookup_results WHERE error_code = 'STOPPING') AS stopping FROM runs`,
        )
      ).getRowObjectsJS();
      expect(runs).toEqual([
        {
          exit_state: 'partial',
          exit_code: 3,
          ok: BigInt(summary.counters.ok),
          stopping: BigInt(summary.counters.deferredByReason.stopping!),
        },
      ]);
    } finally {
      await stopped.close();
    }
  });

  it('ends at once on a second SIGINT, its run finished as interrupted and its orders deferred', {
    timeout: 60_000,
  }, async () => {
    const db = join(workspace.dir, 'interrupted.duckdb');
    // Answers slower than the test waits, and a grace period longer: only the second signal can end the run soon.
    await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 20_000, latencyMaxMs: 20_000 });
    const args = trackArgs(db).map((arg) => (arg === '2000' ? '60000' : arg));
    const child = startCli(args, env);
    let ended: CliResult;
    let signalled: number;
    try {
      await logLine(child, 'inputs staged');
      await new Promise((resolve) => setTimeout(resolve, 500));
      child.kill('SIGINT');
      await logLine(child, 'stop requested');
      signalled = performance.now();
      child.kill('SIGINT');
      ended = await child.ended;
    } finally {
      child.kill('SIGKILL');
      await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 40, latencyMaxMs: 100 });
    }
    expect(performance.now() - signalled).toBeLessThan(2_000);
    expect(child.signalCode).toBeNull();
    expect(ended.code, ended.stderr).toBe(3);
    expect(JSON.parse(ended.stdout)).toMatchObject({ exitState: 'interrupted', exitCode: 3 });
    const interrupted = await Warehouse.open(db, { readOnly: true });
    try {
      const runs = (
        await interrupted.connection.runAndReadAll(
          `SELECT exit_state, exit_code, finished_at IS NOT NULL AS finished,
                  (SELECT count(*) FROM lookup_results WHERE error_code = 'STOPPING') > 0 AS deferred FROM runs`,
        )
      ).getRowObjectsJS();
      expect(runs).toEqual([{ exit_state: 'interrupted', exit_code: 3, finished: true, deferred: true }]);
    } finally {
      await interrupted.close();
    }
  });

  it('tells a second process, writer or reader, in one line which process holds the warehouse', {
    timeout: 90_000,
  }, async () => {
    const db = join(workspace.dir, 'busy.duckdb');
    // Slow answers keep the holder at work past the 10 s the others wait for a briefly held warehouse.
    await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 1_000, latencyMaxMs: 1_000 });
    const holder = startCli(trackArgs(db), env);
    let attempts: CliResult[];
    try {
      // The holder has the file once its run has started.
      await logLine(holder, 'run started');
      attempts = await Promise.all([
        cli(trackArgs(db), env),
        cli(['quota', '--db', db], { PARCEL_RECON_NOW: env.PARCEL_RECON_NOW! }),
        cli(['sql', 'SELECT count(*) FROM orders', '--db', db], {}),
      ]);
      expect(holder.exitCode, 'the holder ended before the others gave up').toBeNull();
    } finally {
      holder.kill('SIGTERM');
      await holder.ended;
      await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 40, latencyMaxMs: 100 });
    }
    for (const attempt of attempts) {
      expect(attempt.code, attempt.stderr).toBe(4);
      const lines = attempt.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`PID ${holder.pid}`);
      expect(lines[0]).not.toContain('    at ');
    }
    expect(attempts[1]!.stderr).toContain('even read-only');
    expect(attempts[2]!.stderr).toContain('even read-only');
    expect(attempts[0]!.stderr).toContain('one process writes the warehouse at a time');
  });
});
