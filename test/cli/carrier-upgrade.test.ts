import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';
import { backToSchemaVersionFour } from '../warehouse/schema-fixtures.js';
import { rowsOf, useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();

/** The tables of order rows, the quota ledger and the runs' rows: what version 5 rebuilds with a carrier. */
const REBUILT = [
  'orders',
  'order_charges',
  'order_statuses',
  'order_trackings',
  'order_changes',
  'delivery_failures',
  'order_charge_audit',
  'price_quotes',
  'lookup_results',
  'run_inputs',
  'quota_usage',
];

async function rowCounts(path: string): Promise<Record<string, string>> {
  const warehouse = await Warehouse.open(path, { readOnly: true, olderSchema: true });
  try {
    const counts = await rowsOf(
      warehouse,
      `SELECT ${REBUILT.map((table) => `(SELECT count(*) FROM ${table}) AS ${table}`).join(', ')}`,
    );
    return counts[0] as Record<string, string>;
  } finally {
    await warehouse.close();
  }
}

/** Each CSV file a report command wrote in `dir`, by name. */
async function csvFiles(dir: string): Promise<Map<string, string>> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.csv')).sort();
  return new Map(
    await Promise.all(names.map(async (name) => [name, await readFile(join(dir, name), 'utf8')] as const)),
  );
}

async function reports(db: string, out: string): Promise<Map<string, string>> {
  const env = { PARCEL_RECON_NOW: '2026-12-05T00:00:00Z' };
  for (const report of ['charges', 'failures', 'cod']) {
    const written = await cli(['report', report, '--db', db, '--out', out], env);
    expect(written.code, written.stderr).toBe(0);
  }
  return csvFiles(out);
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

describe('a warehouse of schema version 4', () => {
  it('is upgraded to carriers: every row kept as 247express, orders keyed by carrier and code, the same reports', async () => {
    const dir = await temp.dir();
    const current = join(dir, 'current.duckdb');
    await buildSyntheticWarehouse(current, 2_000, undefined, { payouts: true });
    const expected = await reports(current, join(dir, 'current'));
    const older = join(dir, 'older.duckdb');
    await copyFile(current, older);
    await backToSchemaVersionFour(older);
    const before = await rowCounts(older);

    const plan = await cli(['upgrade', '--db', older, '--dry-run'], {});
    expect(plan.stdout).toMatch(
      /would be upgraded to schema version 9: 5 \(carriers\), 6 \(cod finding marks\), 7 \(bank deposits\), 8 \(carrier COD facts\), 9 \(snapshot partition changes\); it copies every table before it drops the old one: needs [1-9]\d* MB free, \d+ MB are\n/,
    );
    const upgraded = await cli(['upgrade', '--db', older], {});
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(upgraded.stdout).toContain(
      'upgraded to schema version 9: 5 (carriers), 6 (cod finding marks), 7 (bank deposits), 8 (carrier COD facts), 9 (snapshot partition changes)',
    );

    expect(await rowCounts(older)).toEqual(before);
    const warehouse = await Warehouse.open(older, { readOnly: true });
    try {
      const filled = REBUILT.filter((table) => before[table] !== '0');
      expect(filled.length).toBeGreaterThanOrEqual(8);
      for (const table of filled)
        expect(await rowsOf(warehouse, `SELECT DISTINCT carrier FROM ${table}`), table).toEqual([
          { carrier: '247express' },
        ]);
      const keys = await rowsOf(
        warehouse,
        `SELECT table_name, constraint_column_names AS key FROM duckdb_constraints()
         WHERE constraint_type = 'PRIMARY KEY' AND table_name IN ('orders', 'delivery_failures', 'quota_usage', 'status_codes')
         ORDER BY table_name`,
      );
      expect(keys).toEqual([
        { table_name: 'delivery_failures', key: ['carrier', 'order_code', 'attempted_at'] },
        { table_name: 'orders', key: ['carrier', 'order_code'] },
        { table_name: 'quota_usage', key: ['carrier', 'carrier_day', 'key_alias'] },
        { table_name: 'status_codes', key: ['carrier', 'code'] },
      ]);
    } finally {
      await warehouse.close();
    }
    expect(await reports(older, join(dir, 'upgraded'))).toEqual(expected);
  }, 180_000);

  it('is not upgraded when its file system has no room for a copy of its rows, in one line, and is left as it was', async (context) => {
    const root = process.getuid?.() === 0;
    if (!root && process.env.CI !== 'true') context.skip();
    const dir = await temp.dir();
    const built = join(dir, 'built.duckdb');
    await buildSyntheticWarehouse(built, 20_000);
    await backToSchemaVersionFour(built);
    const small = join(dir, 'small');
    execFileSync('mkdir', ['-p', small]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', small]);
    try {
      const db = join(small, 'recon.duckdb');
      await copyFile(built, db);
      // Leaves about 1 MB free: less than the warehouse's rows take.
      const room = await statfs(small);
      await writeFile(join(small, 'filler'), Buffer.alloc(room.bavail * room.bsize - 1024 * 1024));
      const unchanged = await sha256(db);

      const refused = await cli(['upgrade', '--db', db], {});
      expect(refused.code, refused.stderr).toBe(1);
      const lines = refused.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /schema step 5 \(carriers\) copies every table before it drops the old one and needs \d+ MB free on its file system, which has 1 MB: nothing was changed/,
      );
      expect(await sha256(db)).toBe(unchanged);

      await rm(join(small, 'filler'));
      const upgraded = await cli(['upgrade', '--db', db], {});
      expect(upgraded.code, upgraded.stderr).toBe(0);
    } finally {
      execFileSync('umount', [small]);
    }
  }, 180_000);
});
