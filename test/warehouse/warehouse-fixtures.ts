import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import {
  type CarrierInstant,
  checkTrackingResult,
  type TrackingSnapshotWire,
} from '../../src/carriers/247express/contract.js';
import { type LookupResultRow, type SpooledSnapshot, spooledSnapshot } from '../../src/warehouse/snapshot-loader.js';
import { Warehouse, type WarehouseOptions } from '../../src/warehouse/warehouse.js';
import { placeFreshWarehouse } from '../support/fresh-warehouse.js';

/**
 * A temporary directory per test, removed (with any warehouse opened in it closed) after the test.
 * Call at the top level of a test file. A writable `open` starts from a copy of a new warehouse
 * (test/support/fresh-warehouse.ts) unless `makeEachWarehouse`: the tests of how a new file is made.
 */
export function useTempDirs({ makeEachWarehouse = false }: { readonly makeEachWarehouse?: boolean } = {}): {
  dir(): Promise<string>;
  open(name?: string, options?: WarehouseOptions): Promise<{ warehouse: Warehouse; dir: string; path: string }>;
} {
  const dirs: string[] = [];
  const warehouses: Warehouse[] = [];
  afterEach(async () => {
    for (const warehouse of warehouses.splice(0)) await warehouse.close();
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const dir = async () => {
    const created = await mkdtemp(join(tmpdir(), 'parcel-recon-warehouse-'));
    dirs.push(created);
    return created;
  };
  return {
    dir,
    async open(name = 'recon.duckdb', options?: WarehouseOptions) {
      const base = await dir();
      const path = join(base, 'data', name);
      if (!makeEachWarehouse && !options?.readOnly) await placeFreshWarehouse(path);
      const warehouse = await Warehouse.open(path, options);
      warehouses.push(warehouse);
      return { warehouse, dir: base, path };
    },
  };
}

/** A tracking result as the carrier sends it: an order out for delivery in Hanoi. */
export function trackingWire(orderCode: string): TrackingSnapshotWire {
  return {
    errorMessage: null,
    errorCode: null,
    orderCode,
    externalCode: `SHOP-${orderCode}`,
    acceptDate: '2026-11-09T09:15:30.123456+07:00',
    status: '25',
    statusName: 'DANGDIPHAT',
    trackingName: 'Đang đi phát',
    delayCode: null,
    delayNote: null,
    deliveryNotes: null,
    deliveryDate: null,
    poDeliveryID: null,
    mailMan: { name: 'Trần Văn Bưu', phone: null },
    receiverName: 'Nguyễn Thị Hương',
    serviceTypeID: 'DE',
    mailerTypeID: 'HH',
    extraServiceName: null,
    length: 60,
    width: 60,
    height: 60,
    realWeight: 60.5,
    calWeight: 36,
    weight: 60.5,
    quantity: 2,
    price: 1184800,
    priceFR: 0,
    farRegionFeeAmount: 50000,
    fuelFeeAmount: 236960,
    vatAmount: 147176,
    totalServiceCost: 1618936,
    edtFrom: null,
    edtTo: null,
    senderID: null,
    senderName: null,
    postOfficeAcceptID: null,
    codAmount: 0,
    priceInfo: [
      { serviceName: 'Chuyển phát nhanh', serviceID: 'DE', cost: 1184800 },
      { serviceName: 'Phụ phí vùng sâu vùng xa', serviceID: 'VSVX', cost: 50000 },
      { serviceName: 'Phụ phí xăng dầu', serviceID: 'Fuel', cost: 236960 },
      { serviceName: 'Thuế GTGT', serviceID: 'VAT', cost: 147176 },
    ],
    statuses: [
      {
        time: '2026-11-09T06:30:00+07:00',
        status: '21',
        statusName: 'DATIEPNHAN',
        trackingName: 'Đã tiếp nhận',
        provinceName: null,
        postOfficeName: null,
      },
      {
        time: '2026-11-09T09:15:30+07:00',
        status: '23',
        statusName: 'DALAYHANG',
        trackingName: 'Đã lấy hàng',
        provinceName: 'Hồ Chí Minh',
        postOfficeName: 'Bưu cục Tân Bình',
      },
      {
        time: '2026-11-11T08:05:00+07:00',
        status: '25',
        statusName: 'DANGDIPHAT',
        trackingName: 'Đang đi phát',
        provinceName: 'Hà Nội',
        postOfficeName: 'Bưu cục Cầu Giấy',
      },
    ],
    trackings: [
      {
        statusID: '0',
        statusName: 'Nhập hệ thống',
        postOfficeID: 'HCM01',
        postOfficeName: 'Bưu cục Tân Bình',
        provinceID: '79',
        provinceName: 'Hồ Chí Minh',
        dateChange: '2026-11-09T09:20:00+07:00',
        notes: null,
      },
      {
        statusID: '3',
        statusName: 'Đang chuyển tiếp',
        postOfficeID: 'HCMTT',
        postOfficeName: 'Trung tâm khai thác Tân Sơn Nhất',
        provinceID: '79',
        provinceName: 'Hồ Chí Minh',
        dateChange: '2026-11-09T22:40:00+07:00',
        notes: 'Chuyến bay VN216',
      },
      {
        statusID: '5',
        statusName: 'Đang phát',
        postOfficeID: 'HN05',
        postOfficeName: 'Bưu cục Cầu Giấy',
        provinceID: '01',
        provinceName: 'Hà Nội',
        dateChange: '2026-11-11T08:05:00.654321+07:00',
        notes: null,
      },
    ],
    estimateRoutes: null,
    confirmImage: null,
  };
}

/** A wire result the contract accepted as a snapshot, as the pipeline hands answers to the loader: its order code and JSON text. */
export function snapshotOf(wire: TrackingSnapshotWire): { orderCode: string; body: string } {
  const body = JSON.stringify(wire);
  const checked = checkTrackingResult(JSON.parse(body));
  if (!checked.ok) throw new Error(`fixture rejected by the contract: ${checked.message}`);
  if (checked.value.kind !== 'snapshot') throw new Error('fixture read as an error result');
  return { orderCode: checked.value.snapshot.orderCode, body };
}

const TEMPLATE_CODE = '247EXP_TEMPLATE';
let templateBody: string | undefined;

/**
 * snapshotOf(trackingWire(orderCode)) for many codes at once: the wire differs only in its codes, so
 * the contract checks one and the others are its text with the code in place.
 */
export function snapshotsOf(orderCodes: readonly string[]): { orderCode: string; body: string }[] {
  templateBody ??= snapshotOf(trackingWire(TEMPLATE_CODE)).body;
  const body = templateBody;
  return orderCodes.map((orderCode) => ({ orderCode, body: body.replaceAll(TEMPLATE_CODE, orderCode) }));
}

export function loaded(
  answer: { orderCode: string; body: string },
  seenAt: string,
  runId = 'run-1',
  accountAlias = 'shop-a',
): SpooledSnapshot {
  return spooledSnapshot({ ...answer, accountAlias, seenAt: seenAt as CarrierInstant, runId });
}

/** The lookup_results row of an answered lookup, as the tracking run hands it to the loader. */
export function okLookupResult(orderCode: string, finishedAt: string, runId = 'run-1'): LookupResultRow {
  return {
    runId,
    orderCode,
    accountAlias: 'shop-a',
    outcome: 'ok',
    errorCode: null,
    errorMessage: null,
    attempts: 1,
    origin: 'orders.csv:1',
    finishedAt: finishedAt as CarrierInstant,
  };
}

/** Rows of a query as JSON-friendly values: DECIMAL as text ('0.3000'), TIMESTAMPTZ as '... +00' text, BIGINT as text. */
export async function rowsOf(warehouse: Warehouse, sql: string): Promise<Record<string, unknown>[]> {
  return (await warehouse.readAll(sql)).getRowObjectsJson();
}
