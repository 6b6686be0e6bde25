import { copyFile, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv, startCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const FAST = { latencyMinMs: 5, latencyMaxMs: 20 };

/** Waits until `check` holds, polling often so that a short phase of a process is caught. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Every file of a report folder, by name, as bytes. */
async function filesOf(dir: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {};
  for (const name of (await readdir(dir)).sort()) files[name] = await readFile(join(dir, name));
  return files;
}

function expectOk(result: CliResult): void {
  expect(result.code, result.stderr).toBe(0);
}

async function sqlJson(args: string[]): Promise<unknown> {
  const result = await cli(['sql', ...args, '--format', 'json'], {});
  expectOk(result);
  return JSON.parse(result.stdout);
}

const COUNTS = 'SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM run_inputs) AS run_inputs';

describe('a Parquet snapshot of the warehouse', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let env: Record<string, string>;
  let csv: string;
  let range: string[];
  let snap: string;
  const trackArgs = () => [
    'track',
    '--input',
    csv,
    '--db',
    workspace.dbPath,
    '--no-progress',
    '--concurrency',
    '4',
    '--batch-size',
    '10',
    '--refresh-terminal',
  ];

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      ordersPerAccount: 30,
      historyDays: 5,
      lifecycle: { failedAttemptRate: 0.5 },
      faults: FAST,
    });
    workspace = await trackingWorkspace();
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
    csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...codes]);
    env = sandboxEnv(sandbox);
    const day = carrierDayOf(sandbox.state.clock.now());
    range = ['--from', '2026-11-01', '--to', day];
    expectOk(await cli(trackArgs(), env));
    snap = join(workspace.dir, 'snap');
    expectOk(await cli(['export', '--to', snap, '--db', workspace.dbPath], env));
  }, 120_000);

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('holds every table and report view with a manifest, behind a link to its folder', async () => {
    const target = await readlink(snap);
    expect(target).toMatch(/^snap\.snapshots\/\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    const manifest = JSON.parse(await readFile(join(snap, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 1, schemaVersion: SCHEMA_VERSION });
    // The pretended clock runs on from PARCEL_RECON_NOW: the export reads it a few milliseconds after the start.
    const sincePretended = Date.parse(manifest.exportedAt) - Date.parse(env.PARCEL_RECON_NOW!);
    expect(sincePretended).toBeGreaterThanOrEqual(0);
    expect(sincePretended).toBeLessThan(10_000);
    const names = (manifest.relations as { name: string; rows: number }[]).map((relation) => relation.name);
    for (const name of [
      'orders',
      'delivery_failures',
      'runs',
      'schema_migrations',
      'report_charges',
      'missed_callbacks',
    ])
      expect(names).toContain(name);
    const orders = manifest.relations.find((relation: { name: string }) => relation.name === 'orders');
    expect(orders.rows).toBe(90);
    expect(await readdir(snap)).toContain('orders.parquet');
  });

  it('gives each report over the snapshot byte for byte as over the warehouse, for the same range', {
    timeout: 120_000,
  }, async () => {
    const partner = join(workspace.dir, 'partner.csv');
    const [first] = (await workspace.query<{ order_code: string }>(
      'SELECT order_code FROM orders ORDER BY 1 LIMIT 1',
    ))!;
    await writeFile(
      partner,
      `order_code,expected_status,invoiced_amount\n${first!.order_code},delivered,1000\nGHNX,1,1\n`,
    );
    const reports = [
      ['charges', '--format', 'csv'],
      ['charges', '--format', 'parquet'],
      ['failures', '--format', 'csv'],
      ['failures', '--format', 'json'],
      ['reconcile', '--partner', partner],
    ];
    for (const [index, report] of reports.entries()) {
      const overWarehouse = join(workspace.dir, `warehouse-${index}`);
      const overSnapshot = join(workspace.dir, `snapshot-${index}`);
      const fromWarehouse = await cli(
        ['report', ...report, ...range, '--db', workspace.dbPath, '--out', overWarehouse],
        env,
      );
      const fromSnapshot = await cli(['report', ...report, ...range, '--snapshot', snap, '--out', overSnapshot], env);
      expectOk(fromWarehouse);
      expectOk(fromSnapshot);
      expect(fromSnapshot.stdout.replaceAll(overSnapshot, 'OUT')).toBe(
        fromWarehouse.stdout.replaceAll(overWarehouse, 'OUT'),
      );
      const files = await filesOf(overWarehouse);
      expect(Object.keys(files).length, report.join(' ')).toBeGreaterThan(0);
      expect(await filesOf(overSnapshot), report.join(' ')).toEqual(files);
    }
  });

  it('answers sql and a report over the snapshot while track holds the warehouse', { timeout: 120_000 }, async () => {
    const expected = await sqlJson([COUNTS, '--db', workspace.dbPath]);
    const before = join(workspace.dir, 'failures-before');
    expectOk(await cli(['report', 'failures', ...range, '--snapshot', snap, '--out', before], env));
    // Slow answers keep the run at work, holding the warehouse, past the 10 s a reader of it would wait.
    await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 1_000, latencyMaxMs: 1_000 });
    const holder = startCli(trackArgs(), env);
    try {
      await until(async () => holder.output().stderr.includes('run started'), 'the run to start');
      const during = join(workspace.dir, 'failures-during');
      const [rows, report] = await Promise.all([
        sqlJson([COUNTS, '--snapshot', snap]),
        cli(['report', 'failures', ...range, '--snapshot', snap, '--out', during], env),
      ]);
      expect(holder.exitCode, 'the run ended before the readers answered').toBeNull();
      expect(rows).toEqual(expected);
      expectOk(report);
      expect(await filesOf(during)).toEqual(await filesOf(before));
      const busy = await cli(['sql', 'SELECT 1', '--db', workspace.dbPath], {}, 5_000);
      expect(busy.code, 'sql on the warehouse itself waits for the writer').not.toBe(0);
    } finally {
      holder.kill('SIGTERM');
      await holder.ended;
      await postControl(sandbox, '/_sandbox/faults', FAST);
    }
  });

  it('keeps the previous snapshot whole and readable when an export is killed, and the next export clears what it left', {
    timeout: 180_000,
  }, async () => {
    // A warehouse of its own with many rows, so that an export lasts long enough to be killed while it writes.
    const db = join(workspace.dir, 'kill.duckdb');
    await copyFile(workspace.dbPath, db);
    const kill = join(workspace.dir, 'kill-snap');
    const store = `${kill}.snapshots`;
    expectOk(await cli(['export', '--to', kill, '--db', db], env));
    const first = await readlink(kill);
    const firstCounts = await sqlJson([COUNTS, '--snapshot', kill]);
    const grow = await Warehouse.open(db);
    try {
      await grow.run(
        `INSERT INTO run_inputs SELECT '247express', 'big-run', i, 'GHNBIG' || i, 'shop1', NULL, NULL, NULL FROM range(3000000) AS r(i)`,
      );
    } finally {
      await grow.close();
    }

    // Its spill folder, which a killed export cannot remove, goes under the workspace, removed after the test.
    const exporting = startCli(['export', '--to', kill, '--db', db], { ...env, TMPDIR: workspace.dir });
    await until(
      async () => (await readdir(store)).some((entry) => /\.partial-\d+$/.test(entry)) || exporting.exitCode !== null,
      'the export to start writing',
    );
    expect(exporting.exitCode, 'the export ended before it was killed').toBeNull();
    exporting.kill('SIGKILL');
    await exporting.ended;
    expect(exporting.signalCode).toBe('SIGKILL');
    const left = await readdir(store);
    expect(left.some((entry) => entry.endsWith(`.partial-${exporting.pid}`))).toBe(true);
    expect(await readlink(kill)).toBe(first);
    expect(await sqlJson([COUNTS, '--snapshot', kill])).toEqual(firstCounts);

    expectOk(await cli(['export', '--to', kill, '--db', db], env));
    const second = await readlink(kill);
    expect(second).not.toBe(first);
    // The new snapshot and the one before it, which a reader may still be reading; nothing of the killed export.
    expect((await readdir(store)).sort()).toEqual(
      [first, second].map((target) => target.slice('kill-snap.snapshots/'.length)).sort(),
    );
    expect(await sqlJson([COUNTS, '--snapshot', kill])).toEqual([
      {
        ...(firstCounts as Record<string, string>[])[0],
        run_inputs: String(Number((firstCounts as Record<string, string>[])[0]!.run_inputs) + 3_000_000),
      },
    ]);
  });

  it('refuses --snapshot with --db, a missing snapshot, a query that writes, and an export over a folder, each in one line', async () => {
    const both = await cli(['sql', 'SELECT 1', '--snapshot', snap, '--db', workspace.dbPath], {});
    expect(both.code).toBe(2);
    expect(both.stderr.trim()).toBe('parcel-recon: --snapshot and --db: give one of them');
    const missing = await cli(['report', 'failures', '--snapshot', join(workspace.dir, 'nowhere')], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('no snapshot at');
    const writes = await cli(['sql', `COPY orders TO '${join(snap, 'x.csv')}'`, '--snapshot', snap], {});
    expect(writes.code).toBe(2);
    expect(writes.stderr).toContain('query refused');
    expect(await readdir(snap)).not.toContain('x.csv');
    const outside = await cli(
      ['sql', `SELECT * FROM read_csv('${join(workspace.dir, 'orders.csv')}')`, '--snapshot', snap],
      {},
    );
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('query refused');
    const taken = await cli(['export', '--to', workspace.dir, '--db', workspace.dbPath], {});
    expect(taken.code).toBe(2);
    expect(taken.stderr.trim().split('\n')).toHaveLength(1);
    expect(taken.stderr).toContain('is not a link to a snapshot');
  });
});
