import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { type CliResult, cli } from '../support/cli-process.js';
import { backToSchemaVersionOne } from '../warehouse/schema-fixtures.js';
import { useTempDirs } from '../warehouse/warehouse-fixtures.js';

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
      applied: [{ version: 2, name: 'audit rows with order columns' }],
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
