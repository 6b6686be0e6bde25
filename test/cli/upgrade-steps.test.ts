import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { cli } from '../support/cli-process.js';
import { backToSchemaVersionOne } from '../warehouse/schema-fixtures.js';
import { useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

/** The tables of a DuckDB file, read with DuckDB alone. */
async function tablesOf(path: string): Promise<string[]> {
  const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  try {
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(
      "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1",
    );
    connection.closeSync();
    return reader.getRows().map((row) => String(row[0]));
  } finally {
    instance.closeSync();
  }
}

describe('upgrade', () => {
  it('--dry-run lists the pending steps of an older warehouse and leaves its file as it was', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(db, 200);
    await backToSchemaVersionOne(db);
    const before = await sha256(db);
    const pending = MIGRATIONS.filter((m) => m.version > 1).map(({ version, name }) => ({ version, name }));

    const planned = await cli(['upgrade', '--db', db, '--dry-run', '--json'], {});
    expect(planned.code, planned.stderr).toBe(0);
    // The carriers step copies every table: the plan says the room it needs and what there is.
    const room = { neededBytes: expect.any(Number), freeBytes: expect.any(Number) };
    expect(JSON.parse(planned.stdout)).toEqual({ db, schemaVersion: SCHEMA_VERSION, dryRun: true, pending, room });
    const text = await cli(['upgrade', '--db', db, '--dry-run'], {});
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      `warehouse ${db} would be upgraded to schema version ${SCHEMA_VERSION}: ${pending.map((m) => `${m.version} (${m.name})`).join(', ')}; it copies every table before it drops the old one: needs `,
    );
    expect(await sha256(db)).toBe(before);

    const upgraded = await cli(['upgrade', '--db', db, '--json'], {});
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(JSON.parse(upgraded.stdout)).toMatchObject({ applied: pending });
    const current = await cli(['upgrade', '--db', db, '--dry-run'], {});
    expect(current).toMatchObject({
      code: 0,
      stdout: `warehouse ${db} is at schema version ${SCHEMA_VERSION}: nothing to upgrade\n`,
    });
  }, 120_000);

  it('applies its steps in one transaction: a step that fails leaves none of the steps before it', async () => {
    const dir = await temp.dir();
    const db = join(dir, 'other.duckdb');
    // A DuckDB file whose one table has the name a later step creates: the first step goes through, the later one fails.
    const instance = await DuckDBInstance.create(db);
    const connection = await instance.connect();
    await connection.run('CREATE TABLE order_charge_audit_v2 (note VARCHAR)');
    connection.closeSync();
    instance.closeSync();
    const before = await tablesOf(db);

    const result = await cli(['upgrade', '--db', db], {});
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toContain('    at ');
    expect(await tablesOf(db)).toEqual(before);
  }, 60_000);
});
