import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { chargesQuery, DEFAULT_CHARGE_RULES } from '../../src/reports/charges-report.js';
import { CHARGE_AUDIT_TABLE, chargeAuditQuery } from '../../src/warehouse/charge-audit-rows.js';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { WarehouseError } from '../../src/warehouse/warehouse-errors.js';
import { readWarehouseCatalog } from './warehouse-catalog.js';
import { rowsOf, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

describe('a new warehouse', () => {
  // A change to the schema is meant when this reference changes with it: rewrite the file with
  // `npx vitest run test/warehouse/schema-catalog.test.ts -u` and review its diff.
  it('has the catalog of the current schema', async () => {
    const { warehouse } = await temp.open();
    const catalog = await readWarehouseCatalog(warehouse);
    await expect(`${JSON.stringify(catalog, null, 2)}\n`).toMatchFileSnapshot('./schema-catalog.json');
  });

  it('is at the newest schema version, every migration applied in turn', async () => {
    const { warehouse } = await temp.open();
    expect(await rowsOf(warehouse, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual([
      { version: 1, name: 'baseline' },
      { version: 2, name: 'audit rows with order columns' },
    ]);
  });

  it('is refused once its schema is at a version after the newest', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.run(`INSERT INTO schema_migrations VALUES (${SCHEMA_VERSION + 1}, 'next', current_timestamp)`);
    await warehouse.close();
    await expect(Warehouse.open(path)).rejects.toThrow(
      new WarehouseError(
        `warehouse ${path} has schema version ${SCHEMA_VERSION + 1}, newer than this parcel-recon knows (${SCHEMA_VERSION}); upgrade parcel-recon`,
      ),
    );
  });
});

/** The audit rows' columns at schema version 1. */
const V1_AUDIT_COLUMNS = [
  'order_code',
  'price_info',
  'lines_total',
  'far_region_line_cost',
  'returned_in_history',
  'cancelled_in_history',
  'delivered_at',
  'quote_id',
  'quote_total',
  'total_at_delivery',
  'total_changed_at',
];

describe('a warehouse of schema version 1', () => {
  it("gets audit rows with their order's columns, the catalog of a new warehouse and the same charges", async () => {
    const dir = await temp.dir();
    const path = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(path, 3_000);
    const old = await Warehouse.open(path);
    const charges = (await old.readAll(`SELECT * FROM (${chargesQuery(DEFAULT_CHARGE_RULES)})`)).getRowObjectsJson();
    // Back to version 1: its audit table, with the rows its writers stored.
    await old.run(`CREATE TABLE audit_v1 AS SELECT ${V1_AUDIT_COLUMNS.join(', ')} FROM (${chargeAuditQuery()})`);
    await old.run(`DROP TABLE ${CHARGE_AUDIT_TABLE}`);
    await old.run(`ALTER TABLE audit_v1 RENAME TO ${CHARGE_AUDIT_TABLE}`);
    await old.run('DELETE FROM schema_migrations WHERE version > 1');
    await old.close();

    const migrated = await Warehouse.open(path);
    try {
      expect((await rowsOf(migrated, 'SELECT version FROM schema_migrations ORDER BY version')).length).toBe(
        SCHEMA_VERSION,
      );
      const { warehouse: fresh } = await temp.open();
      const { rowCounts: _migratedRows, ...migratedSchema } = await readWarehouseCatalog(migrated);
      const { rowCounts: _freshRows, ...freshSchema } = await readWarehouseCatalog(fresh);
      expect(migratedSchema).toEqual(freshSchema);
      const [counts] = await rowsOf(
        migrated,
        `SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM ${CHARGE_AUDIT_TABLE}) AS audit,
                (SELECT count(*) FROM ((SELECT * FROM ${CHARGE_AUDIT_TABLE}) EXCEPT ALL (${chargeAuditQuery()}))) AS differing`,
      );
      expect(counts).toEqual({ orders: '3000', audit: '3000', differing: '0' });
      const after = (
        await migrated.readAll(`SELECT * FROM (${chargesQuery(DEFAULT_CHARGE_RULES)})`)
      ).getRowObjectsJson();
      const byCode = (rows: Record<string, unknown>[]) =>
        [...rows].sort((a, b) => String(a.order_code).localeCompare(String(b.order_code)));
      expect(byCode(after)).toEqual(byCode(charges));
      expect(charges.filter((row) => Number(row.flags_failed) > 0).length).toBeGreaterThan(10);
    } finally {
      await migrated.close();
    }
  }, 60_000);
});
