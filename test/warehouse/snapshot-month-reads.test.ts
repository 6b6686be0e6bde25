/**
 * A month's report over the snapshot reads that month's partitions: the manifest keeps each
 * partition's span of the column the reports select days by, and the reader's views leave the
 * partitions outside the report's days to branches DuckDB drops. The reports stay byte for byte those
 * of the warehouse.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { ORDER_COLUMNS, type ReportScope, scopeCondition, scopeWindow } from '../../src/reports/report-sql.js';
import { readManifest, type SnapshotRelation } from '../../src/warehouse/parquet-snapshot.js';
import { openSnapshot } from '../../src/warehouse/parquet-snapshot-reader.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';
import { reportFilesOf } from '../support/report-files.js';

const MONTH: ReportScope = { fromDay: '2026-09-01', toDay: '2026-09-30' };
const RANGE = ['--from', MONTH.fromDay!, '--to', MONTH.toDay!];

/** The files DuckDB's profile says a statement's scans read, summed over the scans. */
async function filesRead(warehouse: Warehouse, query: string): Promise<number> {
  const profile = (await warehouse.readAll(`EXPLAIN ANALYZE ${query}`)).getRows().flat().join('\n');
  const counts = [...profile.matchAll(/Total Files Read: (\d+)/g)].map((match) => Number(match[1]));
  expect(counts.length, profile).toBeGreaterThan(0);
  return counts.reduce((sum, count) => sum + count, 0);
}

/** The files of the partitions whose span meets the window's instants (microseconds). */
function filesMeeting(relation: SnapshotRelation, start: number, end: number): number {
  return relation.partitions
    .filter((partition) => partition.span === undefined || (partition.span.max >= start && partition.span.min < end))
    .reduce((sum, partition) => sum + partition.files.length, 0);
}

describe("a month's report over a snapshot of several months", () => {
  let dir: string;
  let db: string;
  let snap: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-month-reads-'));
    db = join(dir, 'warehouse.duckdb');
    snap = join(dir, 'snap');
    await buildSyntheticWarehouse(db, 6_000, join(dir, 'partner.csv'), { historyDays: 180 });
    const exported = await cli(['export', '--to', snap, '--db', db], {});
    expect(exported.code, exported.stderr).toBe(0);
  }, 180_000);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("keeps each partition's span of the days column, and reads only the partitions within the month", async () => {
    const manifest = await readManifest(snap);
    const window = scopeWindow(MONTH);
    const [start, end] = [window.start! * 1000, window.end! * 1000];
    for (const [name, column] of [
      ['orders', 'order_date'],
      ['order_charge_audit', 'order_date'],
      ['delivery_failures', 'attempted_at'],
    ] as const) {
      const relation = manifest.relations.find((candidate) => candidate.name === name)!;
      expect(relation.spannedBy).toBe(column);
      expect(relation.partitions.length).toBeGreaterThan(3);
      for (const partition of relation.partitions) expect(partition.span).toBeDefined();
      const within = filesMeeting(relation, start, end);
      const total = relation.partitions.reduce((sum, partition) => sum + partition.files.length, 0);
      expect(within).toBeGreaterThan(0);
      expect(within).toBeLessThan(total / 2);

      const days = `SELECT count(*) AS n FROM ${name} WHERE ${scopeCondition(MONTH, { ...ORDER_COLUMNS, time: column })}`;
      const pruned = await openSnapshot(snap, {}, window);
      const whole = await openSnapshot(snap);
      const warehouse = await Warehouse.open(db, { readOnly: true });
      try {
        expect(await filesRead(pruned, days), name).toBe(within);
        expect(await filesRead(whole, days), name).toBe(total);
        const counts = await Promise.all(
          [pruned, whole, warehouse].map(async (reader) => (await reader.readAll(days)).getRowObjectsJS()),
        );
        expect(counts[0]).toEqual(counts[2]);
        expect(counts[1]).toEqual(counts[2]);
        // Outside the days, the pruned views still hold every row.
        const all = `SELECT count(*) AS n, min(${column})::VARCHAR AS first FROM ${name}`;
        expect((await pruned.readAll(all)).getRowObjectsJS()).toEqual((await warehouse.readAll(all)).getRowObjectsJS());
      } finally {
        await Promise.all([pruned.close(), whole.close(), warehouse.close()]);
      }
    }
  });

  it('gives each report of the month byte for byte as over the warehouse', { timeout: 120_000 }, async () => {
    const reports = [
      ['charges', '--format', 'csv'],
      ['failures', '--format', 'csv'],
      ['reconcile', '--partner', join(dir, 'partner.csv')],
      ['cod', '--format', 'csv'],
    ];
    for (const [index, report] of reports.entries()) {
      const overWarehouse = join(dir, `warehouse-${index}`);
      const overSnapshot = join(dir, `snapshot-${index}`);
      const fromWarehouse = await cli(['report', ...report, ...RANGE, '--db', db, '--out', overWarehouse], {});
      const fromSnapshot = await cli(['report', ...report, ...RANGE, '--snapshot', snap, '--out', overSnapshot], {});
      expect(fromWarehouse.code, fromWarehouse.stderr).toBe(0);
      expect(fromSnapshot.code, fromSnapshot.stderr).toBe(0);
      expect(fromSnapshot.stdout.replaceAll(overSnapshot, 'OUT')).toBe(
        fromWarehouse.stdout.replaceAll(overWarehouse, 'OUT'),
      );
      const files = await reportFilesOf(overWarehouse);
      expect(Object.keys(files).length, report.join(' ')).toBeGreaterThan(0);
      expect(await reportFilesOf(overSnapshot), report.join(' ')).toEqual(files);
    }
  });
});
