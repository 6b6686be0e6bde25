import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TrackingSnapshotWire } from '../../src/carriers/247express/contract.js';
import { loadLookupBatch } from '../../src/warehouse/snapshot-loader.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';
import { loaded, rowsOf, snapshotOf, trackingWire, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

const FIRST_FAILURE = {
  time: '2026-11-11T15:20:00+07:00',
  status: '16',
  statusName: 'CHOXULY',
  trackingName: 'Chờ xử lý',
  provinceName: 'Hà Nội',
  postOfficeName: 'Bưu cục Cầu Giấy',
};
const SECOND_FAILURE = { ...FIRST_FAILURE, time: '2026-11-12T16:45:10+07:00', postOfficeName: 'Bưu cục Đống Đa' };
const OUT_AGAIN = {
  ...FIRST_FAILURE,
  time: '2026-11-12T09:00:00+07:00',
  status: '25',
  statusName: 'DANGDIPHAT',
  trackingName: 'Đang đi phát',
};

function wireWith(edit: (wire: TrackingSnapshotWire) => void): TrackingSnapshotWire {
  const wire = trackingWire('247EXP0001');
  edit(wire);
  return wire;
}

async function load(
  warehouse: Warehouse,
  dir: string,
  wire: TrackingSnapshotWire,
  seenAt: string,
  runId: string,
): Promise<void> {
  await loadLookupBatch(
    warehouse,
    { snapshots: [loaded(snapshotOf(wire), seenAt, runId)], results: [] },
    join(dir, 'spool'),
  );
}

const changes = (warehouse: Warehouse) =>
  rowsOf(
    warehouse,
    `SELECT field, old_value, new_value, strftime(seen_at, '%Y-%m-%dT%H:%M:%SZ') AS seen_at, run_id FROM order_changes ORDER BY seen_at, field`,
  );
const failures = (warehouse: Warehouse) =>
  rowsOf(
    warehouse,
    `SELECT strftime(attempted_at, '%Y-%m-%dT%H:%M:%SZ') AS attempted_at, delay_code, delay_note, post_office_name, source, run_id FROM delivery_failures ORDER BY attempted_at`,
  );

describe('the change log and the failed attempts of the snapshot load', () => {
  it('logs each changed field once, with old and new values as text, and nothing for a first or repeated snapshot', async () => {
    const { warehouse, dir } = await temp.open();
    await load(warehouse, dir, trackingWire('247EXP0001'), '2026-11-11T01:00:00.000000Z', 'run-1');
    expect(await changes(warehouse)).toEqual([]);

    const rebilled = wireWith((w) => {
      w.status = '16';
      w.delayCode = '09';
      w.delayNote = 'Không liên lạc được người nhận';
      w.realWeight = 61;
      w.totalServiceCost = 1700000;
      w.priceInfo = [
        ...w.priceInfo!.filter((line) => line.serviceID !== 'VSVX'),
        { serviceName: 'Phụ phí hoàn', serviceID: 'RETURN', cost: 592400 },
      ];
      w.statuses = [...w.statuses!, FIRST_FAILURE];
    });
    await load(warehouse, dir, rebilled, '2026-11-12T01:00:00.000000Z', 'run-2');
    await load(warehouse, dir, rebilled, '2026-11-12T01:00:00.000000Z', 'run-2');
    await load(warehouse, dir, trackingWire('247EXP0001'), '2026-11-11T01:00:00.000000Z', 'run-1');

    expect(await changes(warehouse)).toEqual([
      { field: 'delay_code', old_value: null, new_value: '09', seen_at: '2026-11-12T01:00:00Z', run_id: 'run-2' },
      {
        field: 'delay_note',
        old_value: null,
        new_value: 'Không liên lạc được người nhận',
        seen_at: '2026-11-12T01:00:00Z',
        run_id: 'run-2',
      },
      {
        field: 'price_info.RETURN',
        old_value: null,
        new_value: '592400.0000',
        seen_at: '2026-11-12T01:00:00Z',
        run_id: 'run-2',
      },
      {
        field: 'price_info.VSVX',
        old_value: '50000.0000',
        new_value: null,
        seen_at: '2026-11-12T01:00:00Z',
        run_id: 'run-2',
      },
      { field: 'real_weight', old_value: '60.5', new_value: '61.0', seen_at: '2026-11-12T01:00:00Z', run_id: 'run-2' },
      { field: 'status', old_value: '25', new_value: '16', seen_at: '2026-11-12T01:00:00Z', run_id: 'run-2' },
      {
        field: 'total_service_cost',
        old_value: '1618936.0000',
        new_value: '1700000.0000',
        seen_at: '2026-11-12T01:00:00Z',
        run_id: 'run-2',
      },
    ]);
  });

  it('records every failed attempt the statuses show, the reason only for the latest, and fills an unknown reason once seen', async () => {
    const { warehouse, dir } = await temp.open();
    // Two failures since the last look: the first one's reason is gone from the snapshot.
    const twoFailures = wireWith((w) => {
      w.status = '16';
      w.delayCode = '12';
      w.delayNote = 'Người nhận hẹn lại';
      w.statuses = [...w.statuses!, FIRST_FAILURE, OUT_AGAIN, SECOND_FAILURE];
    });
    await load(warehouse, dir, twoFailures, '2026-11-13T01:00:00.000000Z', 'run-1');
    expect(await failures(warehouse)).toEqual([
      {
        attempted_at: '2026-11-11T08:20:00Z',
        delay_code: null,
        delay_note: null,
        post_office_name: 'Bưu cục Cầu Giấy',
        source: 'tracking',
        run_id: 'run-1',
      },
      {
        attempted_at: '2026-11-12T09:45:10Z',
        delay_code: '12',
        delay_note: 'Người nhận hẹn lại',
        post_office_name: 'Bưu cục Đống Đa',
        source: 'tracking',
        run_id: 'run-1',
      },
    ]);

    // A callback row of a later attempt is kept as it is; an unknown reason is filled in once seen.
    await warehouse.run(
      `INSERT INTO delivery_failures VALUES ('247express', '247EXP0001', '2026-11-14T02:00:00Z', '35', 'Từ chối nhận', NULL, NULL, '2026-11-14T02:00:01Z', 'callback', NULL, 'tx-1')`,
    );
    await warehouse.run(
      `UPDATE delivery_failures SET delay_code = NULL, delay_note = NULL WHERE attempted_at = '2026-11-12T09:45:10Z'`,
    );
    const later = wireWith((w) => {
      w.status = '16';
      w.delayCode = '35';
      w.delayNote = 'Người nhận từ chối';
      w.statuses = [...twoFailures.statuses!, { ...SECOND_FAILURE, time: '2026-11-14T09:00:00+07:00' }];
    });
    await load(warehouse, dir, twoFailures, '2026-11-13T02:00:00.000000Z', 'run-2');
    await load(warehouse, dir, later, '2026-11-14T03:00:00.000000Z', 'run-3');
    expect(await failures(warehouse)).toEqual([
      {
        attempted_at: '2026-11-11T08:20:00Z',
        delay_code: null,
        delay_note: null,
        post_office_name: 'Bưu cục Cầu Giấy',
        source: 'tracking',
        run_id: 'run-1',
      },
      {
        attempted_at: '2026-11-12T09:45:10Z',
        delay_code: '12',
        delay_note: 'Người nhận hẹn lại',
        post_office_name: 'Bưu cục Đống Đa',
        source: 'tracking',
        run_id: 'run-1',
      },
      {
        attempted_at: '2026-11-14T02:00:00Z',
        delay_code: '35',
        delay_note: 'Từ chối nhận',
        post_office_name: null,
        source: 'callback',
        run_id: null,
      },
    ]);
  });
});
