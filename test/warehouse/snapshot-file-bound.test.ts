/**
 * An export cuts a partition past the file bound's rows into files of about its bytes, in the layout
 * of every other partition (the carrier and month in the folder's name, not in the file), and reads
 * back the same rows.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { exportSnapshot } from '../../src/warehouse/parquet-snapshot-export.js';
import { openSnapshot } from '../../src/warehouse/parquet-snapshot-reader.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

/** A bound a test warehouse passes: 30,000 orders of one month have 150,000 statuses, two of DuckDB's row groups. */
const BOUND = { rows: 100_000, bytes: '64KB' };

describe("an export's file bound", () => {
  it('writes a partition past the bound as several files, each of whole row groups, and the others as one', {
    timeout: 120_000,
  }, async () => {
    const dir = await temp.dir();
    const db = join(dir, 'warehouse.duckdb');
    await buildSyntheticWarehouse(db, 30_000, undefined, { historyDays: 20 });
    const warehouse = await Warehouse.open(db, { readOnly: true, directories: [join(dir, 'lake')] });
    try {
      const { manifest } = await exportSnapshot(warehouse, join(dir, 'lake'), new Date('2026-11-30T00:00:00Z'), BOUND);
      const statuses = manifest.relations.find((relation) => relation.name === 'order_statuses')!;
      const large = statuses.partitions.filter((partition) => partition.rows > BOUND.rows);
      expect(large.length).toBeGreaterThan(0);
      for (const partition of large) {
        expect(partition.files.length).toBeGreaterThan(1);
        expect(partition.files.reduce((sum, file) => sum + file.rows, 0)).toBe(partition.rows);
        for (const file of partition.files) expect(file.path.startsWith(`order_statuses/${partition.key}/`)).toBe(true);
      }
      for (const partition of statuses.partitions.filter((p) => p.rows <= BOUND.rows))
        expect(partition.files).toHaveLength(1);
      // Every file of the table has the same columns: none holds the carrier or the month its folder names.
      const columns = await warehouse.readAll(
        `SELECT DISTINCT list(name ORDER BY name) AS names FROM parquet_schema([${statuses.partitions
          .flatMap((partition) => partition.files.map((file) => `'${join(dir, 'lake', file.path)}'`))
          .join(', ')}]) WHERE num_children IS NULL GROUP BY file_name`,
      );
      const names = columns.getRowObjectsJS().map((row) => row.names);
      expect(names).toHaveLength(1);
      expect(names[0]).not.toContain('carrier');
      expect(names[0]).not.toContain('month');

      const snapshot = await openSnapshot(join(dir, 'lake'));
      try {
        const rows = 'SELECT count(*) AS n, sum(hash(s))::VARCHAR AS h FROM order_statuses AS s';
        expect((await snapshot.readAll(rows)).getRowObjectsJS()).toEqual(
          (await warehouse.readAll(rows)).getRowObjectsJS(),
        );
      } finally {
        await snapshot.close();
      }
    } finally {
      await warehouse.close();
    }
  });
});
