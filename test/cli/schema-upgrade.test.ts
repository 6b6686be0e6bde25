import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { CHARGE_AUDIT_TABLE } from '../../src/warehouse/charge-audit-rows.js';
import { SCHEMA_VERSION, WAREHOUSE_MARKER_TABLE } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { type CliResult, cli } from '../support/cli-process.js';
import { backToSchemaVersionOne, backToSchemaVersionTwo } from '../warehouse/schema-fixtures.js';
import { rowsOf, useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();

/** A failure as a user meets it: one line, no stack trace. */
function expectOneLine(result: CliResult, code: number, text: string): void {
  expect(result.code, result.stderr).toBe(code);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(text);
  expect(lines[0]).not.toContain('    at ');
}

describe('a warehouse written by an earlier schema version', () => {
  it('is refused by the reading commands, in one line naming upgrade, which brings it up to date once', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(db, 2_000);
    await backToSchemaVersionOne(db);

    const older = `has schema version 1, older than this parcel-recon's (${SCHEMA_VERSION}): upgrade it with parcel-recon upgrade --db ${db}`;
    expectOneLine(await cli(['report', 'charges', '--db', db, '--out', join(dir, 'reports')], {}), 1, older);
    expectOneLine(await cli(['sql', '--db', db, 'SELECT count(*) FROM orders'], {}), 1, older);

    const upgraded = await cli(['upgrade', '--db', db, '--json'], {});
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(JSON.parse(upgraded.stdout)).toEqual({
      db,
      schemaVersion: SCHEMA_VERSION,
      applied: [
        { version: 2, name: 'audit rows with order columns' },
        { version: 3, name: 'order dates and warehouse marker' },
        { version: 4, name: 'payout statements' },
        { version: 5, name: 'carriers' },
        { version: 6, name: 'cod finding marks' },
        { version: 7, name: 'bank deposits' },
        { version: 8, name: 'carrier COD facts' },
        { version: 9, name: 'snapshot partition changes' },
      ],
    });
    const again = await cli(['upgrade', '--db', db], {});
    expect(again).toMatchObject({ code: 0, stdout: `warehouse ${db} is at schema version ${SCHEMA_VERSION}\n` });

    const report = await cli(['report', 'charges', '--db', db, '--out', join(dir, 'reports'), '--json'], {});
    expect(report.code, report.stderr).toBe(0);
    const charges = (JSON.parse(report.stdout) as { files: { table: string; rows: number }[] }).files;
    expect(charges.find((f) => f.table === 'charges')?.rows).toBe(2_000);

    expectOneLine(await cli(['upgrade', '--db', join(dir, 'missing.duckdb')], {}), 2, 'does not exist');
  }, 120_000);

  it('in a snapshot is refused, in one line naming export', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(db, 100);
    const snapshot = join(dir, 'snapshot');
    const exported = await cli(['export', '--db', db, '--to', snapshot], {});
    expect(exported.code, exported.stderr).toBe(0);
    const manifestPath = join(snapshot, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>;
    expect((await cli(['sql', '--snapshot', snapshot, 'SELECT count(*) FROM orders'], {})).code).toBe(0);
    await writeFile(manifestPath, JSON.stringify({ ...manifest, schemaVersion: 1 }));
    expectOneLine(
      await cli(['sql', '--snapshot', snapshot, 'SELECT count(*) FROM orders'], {}),
      2,
      `snapshot ${snapshot} holds schema version 1, this parcel-recon reads version ${SCHEMA_VERSION}: write one first with parcel-recon export --to DIR`,
    );
  }, 120_000);
});

/** Runs statements on the DuckDB file at `path` as another program would, with DuckDB alone. */
async function withDuckDb(path: string, statements: readonly string[]): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  try {
    for (const statement of statements) await connection.run(statement);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function sha256Of(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

describe('a DuckDB file of something else', () => {
  /** Every command that opens it, the writers first: none may write to it. */
  async function expectEveryCommandRefuses(db: string, dir: string): Promise<void> {
    const keysFile = join(dir, 'keys.json');
    await writeFile(keysFile, JSON.stringify({ 'hanoi-shop': 'k-hanoi' }), { mode: 0o600 });
    const input = join(dir, 'orders.csv');
    await writeFile(input, 'order_code,account\nEX100000001,hanoi-shop\n');
    const before = await sha256Of(db);
    const refusal = `${db} is not a parcel-recon warehouse`;
    const commands = [
      [
        'track',
        ...['--input', input, '--db', db, '--data-dir', join(dir, 'data'), '--keys-file', keysFile],
        ...['--tracking-url', 'http://127.0.0.1:9/api/Order/v1/Tracking'],
      ],
      ['upgrade', '--db', db],
      ['report', 'charges', '--db', db, '--out', join(dir, 'reports')],
      ['sql', '--db', db, 'SELECT 1'],
    ];
    for (const args of commands) {
      expectOneLine(await cli(args, {}), 2, refusal);
      expect(await sha256Of(db), args[0]).toBe(before);
    }
  }

  it('with tables of its own is refused by every command, exit 2 in one line, and left as it was', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'erp.duckdb');
    await withDuckDb(db, [
      'CREATE TABLE invoices (invoice_no VARCHAR PRIMARY KEY, amount DECIMAL(18,2))',
      "INSERT INTO invoices VALUES ('INV-1', 1200.50), ('INV-2', 99.00)",
      'CHECKPOINT',
    ]);
    await expectEveryCommandRefuses(db, dir);
  }, 120_000);

  it('with a schema_migrations table of its own too is refused the same way', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'app.duckdb');
    await withDuckDb(db, [
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)',
      "INSERT INTO schema_migrations VALUES (1, 'baseline', now()), (2, 'users', now())",
      'CREATE TABLE users (id INTEGER PRIMARY KEY, email VARCHAR)',
      "INSERT INTO users VALUES (1, 'a@example.com')",
      'CHECKPOINT',
    ]);
    await expectEveryCommandRefuses(db, dir);
  }, 120_000);

  it('that is empty becomes a warehouse', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'empty.duckdb');
    await withDuckDb(db, ['CHECKPOINT']);
    const upgraded = await cli(['upgrade', '--db', db, '--json'], {});
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect((JSON.parse(upgraded.stdout) as { applied: unknown[] }).applied).toHaveLength(SCHEMA_VERSION);
    const marked = await cli(
      ['sql', '--db', db, '--format', 'json', `SELECT product FROM ${WAREHOUSE_MARKER_TABLE}`],
      {},
    );
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.stdout).toContain('parcel-recon');
  }, 120_000);
});

describe('a warehouse of schema version 2, written before the marker', () => {
  it("is still a warehouse with an analyst's table and view beside it; upgrade dates every order and marks it", async () => {
    const dir = await temp.dir();
    const db = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(db, 1_000);
    await backToSchemaVersionTwo(db);
    // Orders the carrier never accepted: one with a status history, one with nothing but its row.
    await withDuckDb(db, [
      "UPDATE orders SET accept_date = NULL WHERE order_code IN ('EX000000010', 'EX000000020')",
      "DELETE FROM order_statuses WHERE order_code = 'EX000000020'",
      "DELETE FROM order_trackings WHERE order_code = 'EX000000020'",
      "UPDATE orders SET first_seen_at = TIMESTAMPTZ '2026-10-30 01:02:03+00' WHERE order_code = 'EX000000020'",
      'CREATE TABLE analyst_notes (order_code VARCHAR, note VARCHAR)',
      "INSERT INTO analyst_notes VALUES ('EX000000001', 'called the shop')",
      "CREATE VIEW analyst_late AS SELECT order_code FROM orders WHERE status = '16'",
      'CHECKPOINT',
    ]);

    const upgraded = await cli(['upgrade', '--db', db, '--json'], {});
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(JSON.parse(upgraded.stdout)).toEqual({
      db,
      schemaVersion: SCHEMA_VERSION,
      applied: [
        { version: 3, name: 'order dates and warehouse marker' },
        { version: 4, name: 'payout statements' },
        { version: 5, name: 'carriers' },
        { version: 6, name: 'cod finding marks' },
        { version: 7, name: 'bank deposits' },
        { version: 8, name: 'carrier COD facts' },
        { version: 9, name: 'snapshot partition changes' },
      ],
    });

    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      expect(await rowsOf(warehouse, `SELECT product FROM ${WAREHOUSE_MARKER_TABLE}`)).toEqual([
        { product: 'parcel-recon' },
      ]);
      const [dates] = await rowsOf(
        warehouse,
        `SELECT count(*) AS orders,
                count(*) FILTER (WHERE accept_date IS NOT NULL AND order_date <> accept_date) AS not_accept_date,
                count(*) FILTER (WHERE order_date IS NULL) AS undated
         FROM orders`,
      );
      expect(dates).toEqual({ orders: '1000', not_accept_date: '0', undated: '0' });
      const [fromHistory] = await rowsOf(
        warehouse,
        `SELECT (SELECT order_date FROM orders WHERE order_code = 'EX000000010')
                  = (SELECT min(t) FROM (SELECT "time" AS t FROM order_statuses WHERE order_code = 'EX000000010'
                                         UNION ALL SELECT date_change FROM order_trackings WHERE order_code = 'EX000000010')) AS earliest,
                (SELECT strftime(order_date, '%Y-%m-%dT%H:%M:%S') FROM orders WHERE order_code = 'EX000000020') AS first_seen`,
      );
      expect(fromHistory).toEqual({ earliest: true, first_seen: '2026-10-30T01:02:03' });
      const [audit] = await rowsOf(
        warehouse,
        `SELECT count(*) AS differing FROM ${CHARGE_AUDIT_TABLE} AS a JOIN orders AS o USING (order_code)
         WHERE a.order_date IS DISTINCT FROM o.order_date`,
      );
      expect(audit).toEqual({ differing: '0' });
      expect(await rowsOf(warehouse, 'SELECT count(*) AS n FROM analyst_late')).toEqual([expect.anything()]);
      expect(await rowsOf(warehouse, 'SELECT note FROM analyst_notes')).toEqual([{ note: 'called the shop' }]);
    } finally {
      await warehouse.close();
    }

    const report = await cli(['report', 'charges', '--db', db, '--out', join(dir, 'reports'), '--json'], {});
    expect(report.code, report.stderr).toBe(0);
    const files = (JSON.parse(report.stdout) as { files: { table: string; rows: number }[] }).files;
    expect(files.find((f) => f.table === 'charges')?.rows).toBe(1_000);
    // A marked warehouse with an analyst's table and view is a warehouse to the writers too.
    const again = await cli(['upgrade', '--db', db], {});
    expect(again).toMatchObject({ code: 0, stdout: `warehouse ${db} is at schema version ${SCHEMA_VERSION}\n` });
  }, 120_000);

  it('with a table of the schema changed by hand is no longer recognized, and is refused', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(db, 100);
    await backToSchemaVersionTwo(db);
    await withDuckDb(db, ['ALTER TABLE runs DROP COLUMN summary', 'CHECKPOINT']);
    const before = await sha256Of(db);
    expectOneLine(await cli(['upgrade', '--db', db], {}), 2, `${db} is not a parcel-recon warehouse`);
    expect(await sha256Of(db)).toBe(before);
  }, 120_000);
});
