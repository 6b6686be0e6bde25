import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { chargesQuery, DEFAULT_CHARGE_RULES } from '../../src/reports/charges-report.js';
import { CHARGE_AUDIT_TABLE, chargeAuditQuery } from '../../src/warehouse/charge-audit-rows.js';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { WarehouseError } from '../../src/warehouse/warehouse-errors.js';
import { backToSchemaVersionOne } from './schema-fixtures.js';
import { readWarehouseCatalog } from './warehouse-catalog.js';
import { rowsOf, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs({ makeEachWarehouse: true });

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
      { version: 3, name: 'order dates and warehouse marker' },
      { version: 4, name: 'payout statements' },
      { version: 5, name: 'carriers' },
      { version: 6, name: 'cod finding marks' },
      { version: 7, name: 'bank deposits' },
      { version: 8, name: 'carrier COD facts' },
      { version: 9, name: 'snapshot partition changes' },
    ]);
  });

  it('is refused once its schema is at a version after the newest', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.run(`INSERT INTO schema_migrations VALUES (${SCHEMA_VERSION + 1}, 'next', current_timestamp)`);
    await warehouse.close();
    const refusal = new WarehouseError(
      `warehouse ${path} has schema version ${SCHEMA_VERSION + 1}, newer than this parcel-recon knows (${SCHEMA_VERSION}); upgrade parcel-recon`,
    );
    await expect(Warehouse.open(path)).rejects.toThrow(refusal);
    await expect(Warehouse.open(path, { readOnly: true })).rejects.toThrow(refusal);
  });

  it('is told apart from a DuckDB file of something else, which a read-only open refuses', async () => {
    const path = join(await temp.dir(), 'other.duckdb');
    const instance = await DuckDBInstance.create(path);
    const connection = await instance.connect();
    await connection.run('CREATE TABLE orders (order_code VARCHAR)');
    connection.closeSync();
    instance.closeSync();
    await expect(Warehouse.open(path, { readOnly: true })).rejects.toThrow(
      new WarehouseError(
        `${path} is not a parcel-recon warehouse: it holds tables of its own and no parcel_recon_warehouse marker`,
        undefined,
        'WAREHOUSE_NOT_OURS',
      ),
    );
  });
});

describe('a warehouse of schema version 1', () => {
  it("gets audit rows with their order's columns, the catalog of a new warehouse and the same charges", async () => {
    const dir = await temp.dir();
    const path = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(path, 3_000);
    const built = await Warehouse.open(path, { readOnly: true });
    const charges = (await built.readAll(`SELECT * FROM (${chargesQuery(DEFAULT_CHARGE_RULES)})`)).getRowObjectsJson();
    await built.close();
    await backToSchemaVersionOne(path);
    // Reading it as it is would misread its tables; the upgrade writes, so a read-only open cannot make it.
    await expect(Warehouse.open(path, { readOnly: true })).rejects.toThrow(
      new WarehouseError(
        `warehouse ${path} has schema version 1, older than this parcel-recon's (${SCHEMA_VERSION}): upgrade it with parcel-recon upgrade --db ${path}, or by any command that writes to it`,
      ),
    );

    const migrated = await Warehouse.open(path);
    try {
      expect(migrated.migrationsApplied).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
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

  it('gives an order that had no audit row one with no lines and no history, as version 1 read it', async () => {
    const path = join(await temp.dir(), 'recon.duckdb');
    await buildSyntheticWarehouse(path, 300);
    await backToSchemaVersionOne(path, 'EX000000007');
    const migrated = await Warehouse.open(path);
    try {
      const audit = await rowsOf(
        migrated,
        `SELECT order_code, account_alias, price, price_info, lines_total, returned_in_history, quote_total
         FROM ${CHARGE_AUDIT_TABLE} WHERE order_code IN ('EX000000007', 'EX000000008') ORDER BY order_code`,
      );
      const [order] = await rowsOf(
        migrated,
        "SELECT account_alias, price FROM orders WHERE order_code = 'EX000000007'",
      );
      expect(audit[0]).toEqual({
        order_code: 'EX000000007',
        ...order,
        price_info: null,
        lines_total: '0.0000',
        returned_in_history: false,
        quote_total: null,
      });
      expect(audit[1]).toMatchObject({ order_code: 'EX000000008', price_info: expect.stringContaining('=') });
      expect(Number((await rowsOf(migrated, `SELECT count(*) AS n FROM ${CHARGE_AUDIT_TABLE}`))[0]!.n)).toBe(300);
    } finally {
      await migrated.close();
    }
  });
});
