import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TrackingSnapshotWire } from '../../src/carriers/247express/contract.js';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import type { OrderOutcome } from '../../src/pipeline/tracking/order-lookup.js';
import { ResultBatcher } from '../../src/pipeline/tracking/result-batcher.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';
import { rowsOf, snapshotOf, trackingWire, useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();
const FIRST_RUN_MS = Date.parse('2026-11-11T01:00:00Z');
const HOUR_MS = 3_600_000;

/** The carrier's answer for `orderCode`, as a lookup hands it to the batcher. */
function answer(orderCode: string, edit: (wire: TrackingSnapshotWire) => void = () => {}): OrderOutcome {
  const wire = trackingWire(orderCode);
  edit(wire);
  const { orderCode: named, body } = snapshotOf(wire);
  return { kind: 'ok', orderCode: named, body: Buffer.from(body), attempts: 1 };
}

async function historyCounts(warehouse: Warehouse): Promise<Record<string, unknown>[]> {
  return rowsOf(
    warehouse,
    `SELECT o.order_code, o.status, o.last_run_id,
            (SELECT count(*) FROM order_statuses AS s WHERE s.order_code = o.order_code) AS statuses,
            (SELECT count(*) FROM order_trackings AS t WHERE t.order_code = o.order_code) AS trackings
     FROM orders AS o ORDER BY o.order_code`,
  );
}

describe('ResultBatcher', () => {
  it('loads a batch of new orders, and replaces the rows of an order stored before the run', async () => {
    const { warehouse, dir } = await temp.open();
    const first = new ResultBatcher(
      warehouse,
      'run-1',
      join(dir, 'spool'),
      dir,
      () => FIRST_RUN_MS,
      DEFAULT_CARRIER_ID,
    );
    first.add('ORDER0001', 'shop-a', 'a.csv:2', answer('ORDER0001'), false);
    first.add('ORDER0002', 'shop-a', 'a.csv:3', answer('ORDER0002'), false);
    await first.flush();
    const afterFirst = await historyCounts(warehouse);
    expect(afterFirst.map((row) => [row.order_code, row.last_run_id])).toEqual([
      ['ORDER0001', 'run-1'],
      ['ORDER0002', 'run-1'],
    ]);

    const next = new ResultBatcher(
      warehouse,
      'run-2',
      join(dir, 'spool'),
      dir,
      () => FIRST_RUN_MS + HOUR_MS,
      DEFAULT_CARRIER_ID,
    );
    next.add(
      'ORDER0001',
      'shop-a',
      'a.csv:2',
      answer('ORDER0001', (wire) => {
        wire.status = '30';
      }),
      true,
    );
    next.add('ORDER0003', 'shop-a', 'a.csv:4', answer('ORDER0003'), false);
    await next.flush();

    const afterNext = await historyCounts(warehouse);
    expect(afterNext.map((row) => [row.order_code, row.status, row.last_run_id])).toEqual([
      ['ORDER0001', '30', 'run-2'],
      ['ORDER0002', '25', 'run-1'],
      ['ORDER0003', '25', 'run-2'],
    ]);
    // Replaced, not added to: the stored order keeps one set of history rows.
    expect(afterNext[0]?.statuses).toBe(afterFirst[0]?.statuses);
    expect(afterNext[0]?.trackings).toBe(afterFirst[0]?.trackings);
    expect(
      await rowsOf(warehouse, "SELECT order_code, old_value, new_value FROM order_changes WHERE field = 'status'"),
    ).toEqual([{ order_code: 'ORDER0001', old_value: '25', new_value: '30' }]);
  });

  it('takes an answer naming another order than the one asked for as possibly stored', async () => {
    const { warehouse, dir } = await temp.open();
    const first = new ResultBatcher(
      warehouse,
      'run-1',
      join(dir, 'spool'),
      dir,
      () => FIRST_RUN_MS,
      DEFAULT_CARRIER_ID,
    );
    first.add('ORDER0001', 'shop-a', 'a.csv:2', answer('ORDER0001'), false);
    await first.flush();
    const before = await historyCounts(warehouse);

    // The code asked for was not stored, but the carrier answered with a stored order's.
    const next = new ResultBatcher(
      warehouse,
      'run-2',
      join(dir, 'spool'),
      dir,
      () => FIRST_RUN_MS + HOUR_MS,
      DEFAULT_CARRIER_ID,
    );
    next.add(
      'ORDER0001-B',
      'shop-a',
      'a.csv:2',
      answer('ORDER0001', (wire) => {
        wire.status = '30';
      }),
      false,
    );
    await next.flush();

    const after = await historyCounts(warehouse);
    expect(after.map((row) => [row.order_code, row.status, row.last_run_id])).toEqual([['ORDER0001', '30', 'run-2']]);
    expect(after[0]?.statuses).toBe(before[0]?.statuses);
    expect(after[0]?.trackings).toBe(before[0]?.trackings);
  });
});
