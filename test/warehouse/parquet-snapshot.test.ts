import { copyFile, lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { recordChangedRows } from '../../src/warehouse/partition-change-ledger.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv, startCli } from '../support/cli-process.js';
import { reportFilesOf } from '../support/report-files.js';
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

function expectOk(result: CliResult): void {
  expect(result.code, result.stderr).toBe(0);
}

async function sqlJson(args: string[]): Promise<unknown> {
  const result = await cli(['sql', ...args, '--format', 'json'], {});
  expectOk(result);
  return JSON.parse(result.stdout);
}

const COUNTS = 'SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM run_inputs) AS run_inputs';

interface Manifest {
  format: number;
  schemaVersion: number;
  exportedAt: string;
  relations: {
    name: string;
    rows: number;
    partitionedBy: string | null;
    partitions: { key: string; rows: number; files: { path: string; rows: number }[] }[];
  }[];
}

async function manifestOf(dir: string): Promise<Manifest> {
  return JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
}

function relationOf(manifest: Manifest, name: string): Manifest['relations'][number] {
  const relation = manifest.relations.find((candidate) => candidate.name === name);
  if (relation === undefined) throw new Error(`no ${name} in the manifest`);
  return relation;
}

/** Every Parquet file under the snapshot folder, relative to it, with its modification time. */
async function parquetFilesOf(dir: string): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && entry.name.endsWith('.parquet')) {
      const path = join(entry.parentPath, entry.name);
      files.set(relative(dir, path), (await stat(path)).mtimeMs);
    }
  return files;
}

function manifestFiles(manifest: Manifest): string[] {
  return manifest.relations.flatMap((relation) => relation.partitions.flatMap((p) => p.files.map((f) => f.path)));
}

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

  it('holds every table and report view as a Hive-partitioned folder with a manifest', async () => {
    const manifest = await manifestOf(snap);
    expect(manifest).toMatchObject({ format: 2, schemaVersion: SCHEMA_VERSION });
    // The pretended clock runs on from PARCEL_RECON_NOW: the export reads it a few milliseconds after the start.
    const sincePretended = Date.parse(manifest.exportedAt) - Date.parse(env.PARCEL_RECON_NOW!);
    expect(sincePretended).toBeGreaterThanOrEqual(0);
    expect(sincePretended).toBeLessThan(10_000);
    const names = manifest.relations.map((relation) => relation.name);
    for (const name of [
      'orders',
      'delivery_failures',
      'runs',
      'schema_migrations',
      'report_charges',
      'missed_callbacks',
    ])
      expect(names).toContain(name);
    const orders = relationOf(manifest, 'orders');
    expect(orders).toMatchObject({ rows: 90, partitionedBy: 'first_seen_at' });
    for (const partition of orders.partitions) {
      expect(partition.key).toMatch(/^carrier=247express\/month=\d{4}-\d{2}$/);
      for (const file of partition.files)
        expect(file.path).toMatch(
          new RegExp(`^orders/${partition.key}/part-\\d{8}T\\d{6}Z-[0-9a-f]{6}-\\d+\\.parquet$`),
        );
    }
    expect(relationOf(manifest, 'runs')).toMatchObject({ partitionedBy: null, partitions: [{ key: '' }] });
    // A view is its statement, which the reader runs over the snapshot's tables: the same rows as over the warehouse.
    expect(relationOf(manifest, 'report_charges')).toMatchObject({ kind: 'view', rows: null, partitions: [] });
    const views =
      'SELECT (SELECT count(*) FROM report_charges) AS charges, (SELECT count(*) FROM report_failures_by_reason) AS reasons';
    expect(await sqlJson([views, '--snapshot', snap])).toEqual(await sqlJson([views, '--db', workspace.dbPath]));
    // The plain folder holds exactly the files the manifest names.
    expect([...(await parquetFilesOf(snap)).keys()].sort()).toEqual(manifestFiles(manifest).sort());
  });

  it('is read back by a Parquet reader that is not DuckDB: money as DECIMAL, instants in UTC, as in the warehouse', async () => {
    const manifest = await manifestOf(snap);
    const [partition] = relationOf(manifest, 'orders').partitions;
    const [file] = partition!.files;
    const buffer = await asyncBufferFromFile(join(snap, file!.path));
    const metadata = await parquetMetadataAsync(buffer);
    const price = metadata.schema.find((element) => element.name === 'price');
    expect(price).toMatchObject({ logical_type: { type: 'DECIMAL', precision: 20, scale: 4 } });
    const seen = metadata.schema.find((element) => element.name === 'first_seen_at');
    expect(seen?.logical_type).toMatchObject({ type: 'TIMESTAMP', isAdjustedToUTC: true });
    // The carrier is the folder's name, as Hive has it, not a column of the file.
    expect(metadata.schema.some((element) => element.name === 'carrier')).toBe(false);
    const rows = (await parquetReadObjects({
      file: buffer,
      columns: ['order_code', 'price', 'cod_amount', 'first_seen_at'],
    })) as {
      order_code: string;
      price: number | null;
      cod_amount: number | null;
      first_seen_at: Date;
    }[];
    expect(rows.length).toBe(file!.rows);
    const month = /month=(\d{4}-\d{2})/.exec(partition!.key)![1];
    const expected = await workspace.query<{
      order_code: string;
      price: string | null;
      cod_amount: string | null;
      first_seen_at: string;
    }>(
      `SELECT order_code, price::VARCHAR AS price, cod_amount::VARCHAR AS cod_amount, epoch_us(first_seen_at)::VARCHAR AS first_seen_at
         FROM orders WHERE strftime(timezone('Asia/Ho_Chi_Minh', first_seen_at), '%Y-%m') = '${month}' ORDER BY order_code`,
    );
    const read = rows
      .map((row) => ({
        order_code: row.order_code,
        price: row.price === null ? null : row.price.toFixed(4),
        cod_amount: row.cod_amount === null ? null : row.cod_amount.toFixed(4),
        first_seen_at: String(row.first_seen_at.getTime() * 1000),
      }))
      .sort((a, b) => a.order_code.localeCompare(b.order_code));
    expect(read).toEqual(expected);
    expect(read.some((row) => row.price !== null && Number(row.price) > 0)).toBe(true);
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
      const files = await reportFilesOf(overWarehouse);
      expect(Object.keys(files).length, report.join(' ')).toBeGreaterThan(0);
      expect(await reportFilesOf(overSnapshot), report.join(' ')).toEqual(files);
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
      expect(await reportFilesOf(during)).toEqual(await reportFilesOf(before));
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
    expectOk(await cli(['export', '--to', kill, '--db', db], env));
    const firstManifest = await readFile(join(kill, 'manifest.json'), 'utf8');
    const firstCounts = await sqlJson([COUNTS, '--snapshot', kill]);
    const grow = await Warehouse.open(db);
    try {
      await grow.transaction(async (sql) => {
        await sql.run(
          `INSERT INTO run_inputs SELECT '247express', 'big-run', i, 'GHNBIG' || i, 'shop1', NULL, NULL, NULL FROM range(3000000) AS r(i)`,
        );
        await recordChangedRows(sql, 'run_inputs', "SELECT '247express' AS carrier, 'big-run' AS run_id");
      });
    } finally {
      await grow.close();
    }

    // Its spill folder, which a killed export cannot remove, goes under the workspace, removed after the test.
    const exporting = startCli(['export', '--to', kill, '--db', db], { ...env, TMPDIR: workspace.dir });
    const named = new Set(manifestFiles(JSON.parse(firstManifest)));
    await until(
      async () =>
        ((await readdir(kill)).includes(`.export-${exporting.pid}`) &&
          [...(await parquetFilesOf(kill)).keys()].some((path) => !named.has(path))) ||
        exporting.exitCode !== null,
      'the export to start writing',
    );
    expect(exporting.exitCode, 'the export ended before it was killed').toBeNull();
    exporting.kill('SIGKILL');
    await exporting.ended;
    expect(exporting.signalCode).toBe('SIGKILL');
    const afterKill = [...(await parquetFilesOf(kill)).keys()];
    expect(afterKill.some((path) => !named.has(path))).toBe(true);
    // What it wrote is in its hidden staging folder: the tables' folders, as an engine reads them, are the snapshot before.
    expect(afterKill.filter((path) => !path.startsWith('.')).sort()).toEqual([...named].sort());
    expect(await readFile(join(kill, 'manifest.json'), 'utf8')).toBe(firstManifest);
    expect(await sqlJson([COUNTS, '--snapshot', kill])).toEqual(firstCounts);

    expectOk(await cli(['export', '--to', kill, '--db', db], env));
    const second = await manifestOf(kill);
    // Nothing of the killed export is left: the folder holds the files the new manifest names, and no mark.
    expect([...(await parquetFilesOf(kill)).keys()].sort()).toEqual(manifestFiles(second).sort());
    expect(
      (await readdir(kill)).filter((entry) => entry.startsWith('.export-') || entry.includes('.partial-')),
    ).toEqual([]);
    expect(await sqlJson([COUNTS, '--snapshot', kill])).toEqual([
      {
        ...(firstCounts as Record<string, string>[])[0],
        run_inputs: String(Number((firstCounts as Record<string, string>[])[0]!.run_inputs) + 3_000_000),
      },
    ]);
  });

  it('writes again only the partitions a night touched, keeping the files of the others as they were', {
    timeout: 180_000,
  }, async () => {
    const db = join(workspace.dir, 'nights.duckdb');
    await copyFile(workspace.dbPath, db);
    // An older month: the orders of the warehouse, as first seen in August under other codes.
    const older = await Warehouse.open(db);
    try {
      await older.run(`INSERT INTO orders SELECT * REPLACE ('OLD' || order_code AS order_code,
        TIMESTAMPTZ '2026-08-10 10:00:00+07' AS first_seen_at, TIMESTAMPTZ '2026-08-10 10:00:00+07' AS last_seen_at) FROM orders`);
    } finally {
      await older.close();
    }
    const lake = join(workspace.dir, 'lake');
    expectOk(await cli(['export', '--to', lake, '--db', db], env));
    const first = await manifestOf(lake);
    const before = await parquetFilesOf(lake);
    const august = relationOf(first, 'orders').partitions.find((p) => p.key === 'carrier=247express/month=2026-08')!;
    expect(august.rows).toBe(90);

    // A night: the same codes tracked again, touching this month's orders and lookups.
    expectOk(await cli([...trackArgs().map((arg) => (arg === workspace.dbPath ? db : arg))], env));
    const exported = await cli(['export', '--to', lake, '--db', db, '--json'], env);
    expectOk(exported);
    const summary = JSON.parse(exported.stdout);
    const second = await manifestOf(lake);
    const after = await parquetFilesOf(lake);
    // August's files are the same files, untouched, and the manifest names them as before.
    for (const file of august.files) expect(after.get(file.path), file.path).toBe(before.get(file.path));
    expect(relationOf(second, 'orders').partitions.find((p) => p.key === august.key)).toEqual(august);
    // The night's lookups are in this month's partition of lookup_results: written again, under new names.
    const [earlier] = relationOf(first, 'lookup_results').partitions;
    const current = relationOf(second, 'lookup_results').partitions.find((p) => p.key === earlier!.key)!;
    expect(current.rows).toBeGreaterThan(earlier!.rows);
    expect(current.files.map((file) => file.path)).not.toEqual(earlier!.files.map((file) => file.path));
    for (const file of earlier!.files) expect(after.has(file.path), file.path).toBe(false);
    expect(summary.partitionsKept).toBeGreaterThan(0);
    expect(summary.partitionsWritten).toBeGreaterThan(0);
    // The folder holds exactly the files the manifest names, and reads as the warehouse does.
    expect([...after.keys()].sort()).toEqual(manifestFiles(second).sort());
    expect(await sqlJson([COUNTS, '--snapshot', lake])).toEqual(await sqlJson([COUNTS, '--db', db]));
  });

  it('replaces a snapshot of the layout before partitions, a link into DIR.snapshots/, by the folder', async () => {
    const old = join(workspace.dir, 'old-snap');
    await mkdir(join(`${old}.snapshots`, '20261101T000000Z-abcdef'), { recursive: true });
    await writeFile(join(`${old}.snapshots`, '20261101T000000Z-abcdef', 'manifest.json'), '{"format": 1}\n');
    await symlink('old-snap.snapshots/20261101T000000Z-abcdef', old);
    expectOk(await cli(['export', '--to', old, '--db', workspace.dbPath], env));
    expect((await lstat(old)).isDirectory()).toBe(true);
    expect((await readdir(workspace.dir)).filter((name) => name.startsWith('old-snap'))).toEqual(['old-snap']);
    expect(await sqlJson([COUNTS, '--snapshot', old])).toEqual(await sqlJson([COUNTS, '--db', workspace.dbPath]));
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
    expect(taken.stderr).toContain('is not a snapshot folder');
    // A live export's mark (this test's own process stands for it): a second export is refused, the first's files untouched.
    const manifest = await readFile(join(snap, 'manifest.json'), 'utf8');
    await writeFile(join(snap, `.export-${process.pid}`), '');
    try {
      const busy = await cli(['export', '--to', snap, '--db', workspace.dbPath], {});
      expect(busy.code).toBe(2);
      expect(busy.stderr.trim().split('\n')).toHaveLength(1);
      expect(busy.stderr).toContain(`another export (PID ${process.pid}) is writing`);
      expect(await readFile(join(snap, 'manifest.json'), 'utf8')).toBe(manifest);
    } finally {
      await rm(join(snap, `.export-${process.pid}`), { force: true });
    }
  });
});
