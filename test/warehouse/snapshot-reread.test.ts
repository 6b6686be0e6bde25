/**
 * A reading of the snapshot that an export replaces midway (its old files removed) runs again over the
 * new snapshot: it reads one whole snapshot, never a mix, and never fails for the export.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { exportSnapshot } from '../../src/warehouse/parquet-snapshot-export.js';
import { readSnapshot } from '../../src/warehouse/parquet-snapshot-reader.js';
import { recordChangedRows } from '../../src/warehouse/partition-change-ledger.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

const LAST = "order_code = 'EX000002000'";
const STATUS_OF_LAST = `SELECT status_name FROM orders WHERE ${LAST}`;

describe('a reading of the snapshot while an export replaces it', () => {
  it('runs again over the new snapshot, and fails at once for a reason of its own', { timeout: 60_000 }, async () => {
    const dir = await temp.dir();
    const lake = join(dir, 'lake');
    const db = join(dir, 'warehouse.duckdb');
    await buildSyntheticWarehouse(db, 2_000, undefined, { historyDays: 30 });
    const warehouse = await Warehouse.open(db, { directories: [lake] });
    try {
      await exportSnapshot(warehouse, lake, new Date('2026-11-29T00:00:00Z'));
      const statuses: unknown[] = [];
      const answer = await readSnapshot(lake, {}, undefined, async (reader) => {
        statuses.push((await reader.readAll(STATUS_OF_LAST)).getRows()[0]?.[0]);
        if (statuses.length === 1) {
          // The nightly export, between two queries of the reading: the partition of the order is written again.
          await warehouse.transaction(async (sql) => {
            await sql.run(`UPDATE orders SET status_name = 'RETURNED TODAY' WHERE ${LAST}`);
            await recordChangedRows(sql, 'orders', `SELECT * FROM orders WHERE ${LAST}`);
          });
          await exportSnapshot(warehouse, lake, new Date('2026-11-30T00:00:00Z'));
        }
        return (
          await reader.readAll(`SELECT count(*)::INTEGER AS orders, (${STATUS_OF_LAST}) AS last FROM orders`)
        ).getRowObjectsJS()[0];
      });
      expect(statuses).toHaveLength(2);
      expect(statuses[1]).toBe('RETURNED TODAY');
      expect(answer).toEqual({ orders: 2_000, last: 'RETURNED TODAY' });

      let attempts = 0;
      await expect(
        readSnapshot(lake, {}, undefined, async (reader) => {
          attempts++;
          return reader.readAll('SELECT no_such_column FROM orders');
        }),
      ).rejects.toThrow('no_such_column');
      expect(attempts).toBe(1);
    } finally {
      await warehouse.close();
    }
  });
});
