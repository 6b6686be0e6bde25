/**
 * A warehouse for the COD checks, built as a user builds it: tracked orders loaded as the carrier
 * answered them, statements imported with the built `payouts import`, one anomaly of each kind planted.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { STATUS, type TrackingSnapshotWire } from '../../src/carriers/247express/contract.js';
import { loadLookupBatch } from '../../src/warehouse/snapshot-loader.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';
import { loaded, snapshotOf, trackingWire } from '../warehouse/warehouse-fixtures.js';

export const NOW = '2026-11-28T08:00:00+07:00';

/** Every order's charges: price 30,000, fuel 6,000, VAT 3,600, billed 39,600; a return charge adds to it. */
function order(code: string, status: string, day: string, cod: number, returnCharge = 0): TrackingSnapshotWire {
  const wire = trackingWire(code);
  const statuses = [
    { time: '2026-11-05T09:00:00+07:00', status: '23', statusName: 'DALAYHANG', trackingName: 'Đã lấy hàng' },
    ...(status === STATUS.RETURNED
      ? [{ time: `${day}T08:00:00+07:00`, status: STATUS.RETURNING, statusName: 'DANGHOAN', trackingName: 'Đang hoàn' }]
      : []),
    { time: `${day}T10:00:00+07:00`, status, statusName: 'X', trackingName: 'X' },
  ].map((s) => ({ ...s, provinceName: null, postOfficeName: null }));
  return {
    ...wire,
    acceptDate: '2026-11-05T09:00:00+07:00',
    status,
    statusName: 'X',
    codAmount: cod,
    price: 30000,
    priceFR: returnCharge,
    farRegionFeeAmount: 0,
    fuelFeeAmount: 6000,
    vatAmount: 3600,
    totalServiceCost: 39600 + returnCharge,
    priceInfo: [],
    statuses,
  };
}

const DELIVERED = STATUS.DELIVERED;

/** The tracked orders: [wire, account]. */
const ORDERS: [TrackingSnapshotWire, string][] = [
  [order('EXC0001', DELIVERED, '2026-11-12', 1_000_000), 'shop-a'], // clean, paid in P1
  [order('EXC0002', DELIVERED, '2026-11-13', 500_000), 'shop-a'], // clean, paid in P1
  [order('EXC0003', DELIVERED, '2026-11-25', 300_000), 'shop-a'], // clean: unpaid for 3 days only
  [order('EXC0004', DELIVERED, '2026-11-14', 450_000), 'shop-a'], // clean: a fee withheld in P1, refunded in P2
  [order('EXC0005', DELIVERED, '2026-11-20', 0), 'shop-a'], // clean: no COD, in no statement
  [order('EXU0001', DELIVERED, '2026-11-10', 700_000), 'shop-b'], // unpaid 18 days
  [order('EXL0001', DELIVERED, '2026-11-15', 400_000), 'shop-a'], // net paid 10,400 short
  [order('EXF0001', DELIVERED, '2026-11-16', 600_000), 'shop-a'], // 20,000 more fees withheld than billed
  [order('EXN0001', STATUS.RETURNED, '2026-11-17', 250_000), 'shop-a'], // returned, COD paid
  [order('EXD0001', DELIVERED, '2026-11-11', 800_000), 'shop-a'], // COD paid in P1 and P2
  [order('EXT0001', DELIVERED, '2026-11-12', 900_000, 25_000), 'shop-b'], // a return fee, never returned
];

const HEADER =
  'Mã phiên,Ngày thanh toán,Mã vận đơn,Loại dòng,Tiền thu hộ,Cước chính,Phí vùng xa,Phụ phí xăng dầu,VAT,Phí thu hộ,Công nợ trừ,Thực trả,Tổng phiên';

/** P1: its stated total 20,000 more than its lines' net paid (3,417,000). */
const P1 = [
  HEADER,
  'P1,17/11/2026,EXC0001,Thu hộ,1.000.000,30.000,0,6.000,3.600,10.000,0,950.400,3.437.000',
  'P1,17/11/2026,EXC0002,Thu hộ,500.000,30.000,0,6.000,3.600,5.000,0,455.400,3.437.000',
  'P1,17/11/2026,EXC0004,Thu hộ,450.000,50.000,0,6.000,3.600,0,0,390.400,3.437.000',
  'P1,17/11/2026,EXD0001,Thu hộ,800.000,30.000,0,6.000,3.600,0,0,760.400,3.437.000',
  'P1,17/11/2026,EXT0001,Thu hộ,900.000,30.000,0,6.000,3.600,0,0,860.400,3.437.000',
].join('\n');

/** P2: the refund of EXC0004's 20,000; EXL0001 paid 10,400 short; EXF0001 charged 20,000 more; EXN0001 paid though returned; EXD0001 again. */
const P2 = [
  HEADER,
  'P2,24/11/2026,EXC0004,Hoàn phí,0,-20.000,0,0,0,0,0,20.000,',
  'P2,24/11/2026,EXL0001,Thu hộ,400.000,30.000,0,6.000,3.600,0,0,350.000,',
  'P2,24/11/2026,EXF0001,Thu hộ,600.000,50.000,0,6.000,3.600,0,0,540.400,',
  'P2,24/11/2026,EXN0001,Thu hộ,250.000,30.000,0,6.000,3.600,0,0,210.400,',
  'P2,24/11/2026,EXD0001,Thu hộ,800.000,0,0,0,0,0,0,800.000,',
].join('\n');

/** A layout of the shop's own with a return fee column: EXT0001's 25,000 return fee as a fee, not a debt. */
export const CONFIG = {
  payouts: {
    layouts: {
      'with-returns': {
        carrier: '247express',
        columns: {
          batchId: 'Mã phiên',
          batchDate: 'Ngày thanh toán',
          orderCode: 'Mã vận đơn',
          codCollected: 'Tiền thu hộ',
          netPaid: 'Thực trả',
        },
        fees: { 'Cước chính': 'shipping', 'Phụ phí xăng dầu': 'fuel', VAT: 'vat', 'Phí hoàn': 'return' },
      },
    },
  },
};
const P3 = [
  'Mã phiên,Ngày thanh toán,Mã vận đơn,Tiền thu hộ,Cước chính,Phụ phí xăng dầu,VAT,Phí hoàn,Thực trả',
  'P3,26/11/2026,EXT0001,0,0,0,0,25.000,-25.000',
].join('\n');

/** Builds the warehouse `dir/recon.duckdb` and its configuration `dir/parcel-recon.config.json`. */
export async function buildCodWarehouse(dir: string): Promise<{ db: string; config: string }> {
  const db = join(dir, 'recon.duckdb');
  const config = join(dir, 'parcel-recon.config.json');
  await writeFile(config, JSON.stringify(CONFIG));
  const warehouse = await Warehouse.open(db);
  try {
    await loadLookupBatch(
      warehouse,
      {
        snapshots: ORDERS.map(([wire, account]) =>
          loaded(snapshotOf(wire), '2026-11-27T10:00:00+07:00', 'run-1', account),
        ),
        results: [],
      },
      join(dir, 'spool'),
    );
  } finally {
    await warehouse.close();
  }
  for (const [name, text, layout] of [
    ['p1.csv', P1, []],
    ['p2.csv', P2, []],
    ['p3.csv', P3, ['--layout', 'with-returns']],
  ] as const) {
    const path = join(dir, name);
    await writeFile(path, text);
    const imported = await cli(['payouts', 'import', '--db', db, '--config', config, ...layout, path], {
      PARCEL_RECON_NOW: NOW,
    });
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
  }
  return { db, config };
}
