import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTrackingResult, type TrackingSnapshotWire } from '../../src/carriers/247express/contract.js';
import { answerBodyAsRead } from '../../src/carriers/answer-body.js';
import { failureLine } from '../../src/cli/failure-advice.js';
import { type LookupOutcome, type LookupResultRow, loadLookupBatch } from '../../src/warehouse/snapshot-loader.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';
import { WarehouseOutOfMemoryError } from '../../src/warehouse/warehouse-errors.js';
import {
  loaded,
  okLookupResult,
  rowsOf,
  snapshotOf,
  snapshotsOf,
  trackingWire,
  useTempDirs,
} from './warehouse-fixtures.js';

const temp = useTempDirs();

const SEEN_1 = '2026-11-11T04:43:07.000001Z';
const SEEN_2 = '2026-11-12T01:00:00.000000Z';

function wireWith(orderCode: string, edit: (wire: TrackingSnapshotWire) => void): TrackingSnapshotWire {
  const wire = trackingWire(orderCode);
  edit(wire);
  return wire;
}

/** Every row of the order tables and lookup_results, in a stable order, as text. */
async function dump(warehouse: Warehouse): Promise<Record<string, unknown>> {
  return {
    orders: await rowsOf(warehouse, 'SELECT * FROM orders ORDER BY order_code'),
    charges: await rowsOf(warehouse, 'SELECT * FROM order_charges ORDER BY order_code, line_no'),
    statuses: await rowsOf(warehouse, 'SELECT * FROM order_statuses ORDER BY order_code, seq'),
    trackings: await rowsOf(warehouse, 'SELECT * FROM order_trackings ORDER BY order_code, seq'),
    results: await rowsOf(warehouse, 'SELECT * FROM lookup_results ORDER BY run_id, order_code'),
  };
}

describe('loadLookupBatch', () => {
  it("keeps two carriers' orders of the same code apart: a newer snapshot of one replaces its own rows only", async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const code = '247EXP0007';
    // GHN's answer of its own order with the same code: its published sample, its log cut to `entries`
    // and its status the last of them.
    const sample = JSON.parse(
      await readFile(new URL('../carriers/ghn-samples/detail-by-client-code-returning.json', import.meta.url), 'utf8'),
    ) as { data: { log: unknown[] }[] };
    const ghnAnswer = (entries: number) => {
      const log = sample.data[0]!.log.slice(0, entries) as { status: string }[];
      const order = { ...sample.data[0]!, order_code: code, status: log.at(-1)!.status, log };
      return { orderCode: code, body: JSON.stringify({ detail: { ...sample, data: order }, fees: null }) };
    };
    await loadLookupBatch(
      warehouse,
      {
        snapshots: [loaded(snapshotOf(trackingWire(code)), SEEN_1)],
        results: [okLookupResult(code, SEEN_1)],
        carrier: '247express',
      },
      spoolDir,
    );
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded(ghnAnswer(2), SEEN_1)], results: [okLookupResult(code, SEEN_1)], carrier: 'ghn' },
      spoolDir,
    );
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded(ghnAnswer(6), SEEN_2, 'run-2')], results: [], carrier: 'ghn' },
      spoolDir,
    );

    expect(
      await rowsOf(warehouse, 'SELECT carrier, order_code, status, last_run_id FROM orders ORDER BY carrier'),
    ).toEqual([
      { carrier: '247express', order_code: code, status: trackingWire(code).status, last_run_id: 'run-1' },
      { carrier: 'ghn', order_code: code, status: 'return', last_run_id: 'run-2' },
    ]);
    expect(
      await rowsOf(warehouse, 'SELECT carrier, count(*) AS n FROM order_statuses GROUP BY carrier ORDER BY carrier'),
    ).toEqual([
      { carrier: '247express', n: String(trackingWire(code).statuses!.length) },
      { carrier: 'ghn', n: '6' },
    ]);
    expect(
      await rowsOf(warehouse, 'SELECT carrier, count(*) AS lines FROM order_charges GROUP BY carrier ORDER BY carrier'),
    ).toEqual([{ carrier: '247express', lines: String(trackingWire(code).priceInfo!.length) }]);
    // Only GHN's order changed: the newer snapshot is its own, compared with its own stored row.
    expect(await rowsOf(warehouse, 'SELECT DISTINCT carrier FROM order_changes ORDER BY carrier')).toEqual([
      { carrier: 'ghn' },
    ]);
    expect(
      await rowsOf(
        warehouse,
        'SELECT carrier, count(*) AS n FROM order_charge_audit GROUP BY carrier ORDER BY carrier',
      ),
    ).toEqual([
      { carrier: '247express', n: '1' },
      { carrier: 'ghn', n: '1' },
    ]);
    expect(
      await rowsOf(warehouse, 'SELECT carrier, count(*) AS n FROM lookup_results GROUP BY carrier ORDER BY carrier'),
    ).toEqual([
      { carrier: '247express', n: '1' },
      { carrier: 'ghn', n: '1' },
    ]);
    // GHN's log holds one failed attempt (delivery_fail); waiting_to_return after it is a hold, not another.
    expect(await rowsOf(warehouse, "SELECT count(*) AS n FROM delivery_failures WHERE carrier = 'ghn'")).toEqual([
      { n: '1' },
    ]);
  });

  it('writes the order, its charges, statuses and trackings, and the lookup result, with the right values and types', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await loadLookupBatch(
      warehouse,
      {
        snapshots: [loaded(snapshotOf(trackingWire('247EXP0001')), SEEN_1)],
        results: [okLookupResult('247EXP0001', SEEN_1)],
      },
      spoolDir,
    );

    const [order] = await rowsOf(
      warehouse,
      `SELECT order_code, account_alias, external_code, strftime(accept_date, '%Y-%m-%dT%H:%M:%S.%fZ') AS accept_date, typeof(accept_date) AS accept_date_type,
              status, status_name, tracking_name, delay_code, delivery_date, po_delivery_id, mail_man, typeof(mail_man) AS mail_man_type,
              receiver_name, service_type_id, mailer_type_id, length, real_weight, typeof(real_weight) AS weight_type, quantity, typeof(quantity) AS quantity_type,
              price, typeof(price) AS price_type, price_fr, total_service_cost, cod_amount, is_terminal,
              strftime(first_seen_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS first_seen_at, strftime(last_seen_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS last_seen_at, last_run_id
       FROM orders`,
    );
    expect(order).toEqual({
      order_code: '247EXP0001',
      account_alias: 'shop-a',
      external_code: 'SHOP-247EXP0001',
      accept_date: '2026-11-09T02:15:30.123456Z',
      accept_date_type: 'TIMESTAMP WITH TIME ZONE',
      status: '25',
      status_name: 'DANGDIPHAT',
      tracking_name: 'Đang đi phát',
      delay_code: null,
      delivery_date: null,
      po_delivery_id: null,
      mail_man: '{"name":"Trần Văn Bưu","phone":null}',
      mail_man_type: 'JSON',
      receiver_name: 'Nguyễn Thị Hương',
      service_type_id: 'DE',
      mailer_type_id: 'HH',
      length: 60,
      real_weight: 60.5,
      weight_type: 'DOUBLE',
      quantity: 2,
      quantity_type: 'INTEGER',
      price: '1184800.0000',
      price_type: 'DECIMAL(20,4)',
      price_fr: '0.0000',
      total_service_cost: '1618936.0000',
      cod_amount: '0.0000',
      is_terminal: false,
      first_seen_at: SEEN_1,
      last_seen_at: SEEN_1,
      last_run_id: 'run-1',
    });

    expect(
      await rowsOf(
        warehouse,
        'SELECT order_code, line_no, service_id, service_name, cost FROM order_charges ORDER BY line_no',
      ),
    ).toEqual([
      {
        order_code: '247EXP0001',
        line_no: 1,
        service_id: 'DE',
        service_name: 'Chuyển phát nhanh',
        cost: '1184800.0000',
      },
      {
        order_code: '247EXP0001',
        line_no: 2,
        service_id: 'VSVX',
        service_name: 'Phụ phí vùng sâu vùng xa',
        cost: '50000.0000',
      },
      {
        order_code: '247EXP0001',
        line_no: 3,
        service_id: 'Fuel',
        service_name: 'Phụ phí xăng dầu',
        cost: '236960.0000',
      },
      { order_code: '247EXP0001', line_no: 4, service_id: 'VAT', service_name: 'Thuế GTGT', cost: '147176.0000' },
    ]);
    expect(
      await rowsOf(
        warehouse,
        'SELECT sum(cost) = max(o.total_service_cost) AS charges_add_up FROM order_charges JOIN orders o USING (order_code)',
      ),
    ).toEqual([{ charges_add_up: true }]);

    expect(
      await rowsOf(
        warehouse,
        `SELECT seq, strftime("time", '%Y-%m-%dT%H:%M:%S.%fZ') AS "time", status, status_name, tracking_name, province_name, post_office_name
         FROM order_statuses ORDER BY seq`,
      ),
    ).toEqual([
      {
        seq: 1,
        time: '2026-11-08T23:30:00.000000Z',
        status: '21',
        status_name: 'DATIEPNHAN',
        tracking_name: 'Đã tiếp nhận',
        province_name: null,
        post_office_name: null,
      },
      {
        seq: 2,
        time: '2026-11-09T02:15:30.000000Z',
        status: '23',
        status_name: 'DALAYHANG',
        tracking_name: 'Đã lấy hàng',
        province_name: 'Hồ Chí Minh',
        post_office_name: 'Bưu cục Tân Bình',
      },
      {
        seq: 3,
        time: '2026-11-11T01:05:00.000000Z',
        status: '25',
        status_name: 'DANGDIPHAT',
        tracking_name: 'Đang đi phát',
        province_name: 'Hà Nội',
        post_office_name: 'Bưu cục Cầu Giấy',
      },
    ]);

    expect(
      await rowsOf(
        warehouse,
        `SELECT seq, status_id, status_name, post_office_id, post_office_name, province_id, province_name,
                strftime(date_change, '%Y-%m-%dT%H:%M:%S.%fZ') AS date_change, notes
         FROM order_trackings ORDER BY seq`,
      ),
    ).toEqual([
      {
        seq: 1,
        status_id: '0',
        status_name: 'Nhập hệ thống',
        post_office_id: 'HCM01',
        post_office_name: 'Bưu cục Tân Bình',
        province_id: '79',
        province_name: 'Hồ Chí Minh',
        date_change: '2026-11-09T02:20:00.000000Z',
        notes: null,
      },
      {
        seq: 2,
        status_id: '3',
        status_name: 'Đang chuyển tiếp',
        post_office_id: 'HCMTT',
        post_office_name: 'Trung tâm khai thác Tân Sơn Nhất',
        province_id: '79',
        province_name: 'Hồ Chí Minh',
        date_change: '2026-11-09T15:40:00.000000Z',
        notes: 'Chuyến bay VN216',
      },
      {
        seq: 3,
        status_id: '5',
        status_name: 'Đang phát',
        post_office_id: 'HN05',
        post_office_name: 'Bưu cục Cầu Giấy',
        province_id: '01',
        province_name: 'Hà Nội',
        date_change: '2026-11-11T01:05:00.654321Z',
        notes: null,
      },
    ]);

    expect(
      await rowsOf(
        warehouse,
        `SELECT run_id, order_code, account_alias, outcome, error_code, error_message, attempts, origin,
                strftime(finished_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS finished_at FROM lookup_results`,
      ),
    ).toEqual([
      {
        run_id: 'run-1',
        order_code: '247EXP0001',
        account_alias: 'shop-a',
        outcome: 'ok',
        error_code: null,
        error_message: null,
        attempts: 1,
        origin: 'orders.csv:1',
        finished_at: SEEN_1,
      },
    ]);

    // The spool file is gone.
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it('keeps money exact: 0.1 + 0.2 is 0.3 in SQL', async () => {
    const { warehouse, dir } = await temp.open();
    const snapshot = snapshotOf(
      wireWith('247EXP0002', (w) => {
        w.price = 0.1;
        w.priceFR = 0.2;
        w.priceInfo = [
          { serviceName: 'Chuyển phát nhanh', serviceID: 'DE', cost: 0.1 },
          { serviceName: 'Phụ phí xăng dầu', serviceID: 'Fuel', cost: 0.2 },
        ];
      }),
    );
    await loadLookupBatch(warehouse, { snapshots: [loaded(snapshot, SEEN_1)], results: [] }, join(dir, 'spool'));

    expect(
      await rowsOf(warehouse, 'SELECT price + price_fr AS total, price + price_fr = 0.3 AS exact FROM orders'),
    ).toEqual([{ total: '0.3000', exact: true }]);
    expect(await rowsOf(warehouse, 'SELECT sum(cost) AS total, sum(cost) = 0.3 AS exact FROM order_charges')).toEqual([
      { total: '0.3000', exact: true },
    ]);
  });

  it('reads the answer as the contract does: every date-time form, money written any way, a key given twice, line breaks, extra fields', async () => {
    const { warehouse, dir } = await temp.open();
    const wire = trackingWire('247EXP0013');
    const forms = [
      '2026-11-09T09:15:30+07:00',
      '2026-11-09 09:15:30',
      '2026-11-09T02:15:30.1234567Z',
      '2026-11-09t04:15:30,5-05:00',
      ' 2026-11-09T09:15 +0700 ',
    ];
    wire.acceptDate = forms[0]!;
    wire.deliveryDate = forms[1]!;
    wire.statuses = forms.map((time, i) => ({ ...wire.statuses![0]!, time, status: String(21 + i) }));
    wire.trackings = forms.map((dateChange) => ({ ...wire.trackings![0]!, dateChange }));
    // Money as the carrier may write it in JSON text: an exponent, a fraction, a whole number with a point.
    const body = JSON.stringify({ ...wire, extraField: { nested: [1, 2] }, price: 1 })
      .replace('"price":1', '"price":1.5E4')
      .replace('"vatAmount":147176', '"vatAmount":147176.0')
      .replace('"priceFR":0', '"priceFR":0.1,\n  "priceFR" : 0.25')
      .replace(',"statuses":', ',\r\n"statuses":');
    const decoded: unknown = JSON.parse(body);
    const checked = checkTrackingResult(decoded);
    if (!checked.ok || checked.value.kind !== 'snapshot') throw new Error('the test answer must pass the contract');
    const expected = checked.value.snapshot;
    expect([expected.price, expected.priceFR, expected.vatAmount]).toEqual(['15000', '0.25', '147176']);

    // The body as the client hands it over (answerBodyAsRead: the key given twice written once).
    const handedOver = answerBodyAsRead(Buffer.from(body), decoded).toString('utf8');
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded({ orderCode: expected.orderCode, body: handedOver }, SEEN_1)], results: [] },
      join(dir, 'spool'),
    );

    const instant = (column: string) => `strftime(${column}, '%Y-%m-%dT%H:%M:%S.%fZ')`;
    expect(
      await rowsOf(
        warehouse,
        `SELECT ${instant('accept_date')} AS accept_date, ${instant('delivery_date')} AS delivery_date, price, price_fr, vat_amount FROM orders`,
      ),
    ).toEqual([
      {
        accept_date: expected.acceptDate,
        delivery_date: expected.deliveryDate,
        price: '15000.0000',
        price_fr: '0.2500',
        vat_amount: '147176.0000',
      },
    ]);
    expect(
      (await rowsOf(warehouse, `SELECT ${instant('"time"')} AS t FROM order_statuses ORDER BY seq`)).map(
        (row) => row.t,
      ),
    ).toEqual(expected.statuses.map((status) => status.time));
    expect(
      (await rowsOf(warehouse, `SELECT ${instant('date_change')} AS t FROM order_trackings ORDER BY seq`)).map(
        (row) => row.t,
      ),
    ).toEqual(expected.trackings.map((event) => event.dateChange));
  });

  it('loads unknown status, step and delay codes as data, and marks terminal statuses', async () => {
    const { warehouse, dir } = await temp.open();
    const unknown = snapshotOf(
      wireWith('247EXP0003', (w) => {
        w.status = '99';
        w.statusName = 'TRANGTHAIMOI';
        w.delayCode = '77';
        w.delayNote = 'Lý do chưa có trong bảng';
        w.statuses = [
          {
            time: '2026-11-10T08:00:00+07:00',
            status: '99',
            statusName: 'TRANGTHAIMOI',
            trackingName: 'Trạng thái mới',
            provinceName: 'Hà Nội',
            postOfficeName: null,
          },
        ];
        w.trackings = [
          {
            statusID: '42',
            statusName: 'Bước mới',
            postOfficeID: null,
            postOfficeName: null,
            provinceID: null,
            provinceName: null,
            dateChange: '2026-11-10T08:00:00+07:00',
            notes: null,
          },
        ];
      }),
    );
    const delivered = snapshotOf(
      wireWith('247EXP0004', (w) => {
        w.status = '30';
        w.statusName = 'PHATTHANHCONG';
        w.trackingName = 'Phát thành công';
      }),
    );
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded(unknown, SEEN_1), loaded(delivered, SEEN_1)], results: [] },
      join(dir, 'spool'),
    );

    expect(
      await rowsOf(
        warehouse,
        'SELECT order_code, status, delay_code, delay_note, is_terminal FROM orders ORDER BY order_code',
      ),
    ).toEqual([
      {
        order_code: '247EXP0003',
        status: '99',
        delay_code: '77',
        delay_note: 'Lý do chưa có trong bảng',
        is_terminal: false,
      },
      { order_code: '247EXP0004', status: '30', delay_code: null, delay_note: null, is_terminal: true },
    ]);
    expect(
      await rowsOf(warehouse, "SELECT status, tracking_name FROM order_statuses WHERE order_code = '247EXP0003'"),
    ).toEqual([{ status: '99', tracking_name: 'Trạng thái mới' }]);
    expect(
      await rowsOf(warehouse, "SELECT status_id, post_office_id FROM order_trackings WHERE order_code = '247EXP0003'"),
    ).toEqual([{ status_id: '42', post_office_id: null }]);
  });

  it('replaces the history of an order with that of a newer snapshot, and keeps first_seen_at', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded(snapshotOf(trackingWire('247EXP0005')), SEEN_1)], results: [] },
      spoolDir,
    );

    const newer = snapshotOf(
      wireWith('247EXP0005', (w) => {
        w.status = '16';
        w.delayCode = '13';
        w.priceInfo = [{ serviceName: 'Chuyển phát nhanh', serviceID: 'DE', cost: 1000 }];
        w.statuses = w.statuses?.slice(0, 2) ?? null;
        w.trackings = null;
      }),
    );
    await loadLookupBatch(warehouse, { snapshots: [loaded(newer, SEEN_2, 'run-2')], results: [] }, spoolDir);

    expect(
      await rowsOf(
        warehouse,
        `SELECT status, delay_code, last_run_id, strftime(first_seen_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS first_seen_at,
                strftime(last_seen_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS last_seen_at FROM orders`,
      ),
    ).toEqual([{ status: '16', delay_code: '13', last_run_id: 'run-2', first_seen_at: SEEN_1, last_seen_at: SEEN_2 }]);
    expect(await rowsOf(warehouse, 'SELECT line_no, service_id, cost FROM order_charges')).toEqual([
      { line_no: 1, service_id: 'DE', cost: '1000.0000' },
    ]);
    expect(await rowsOf(warehouse, 'SELECT seq FROM order_statuses ORDER BY seq')).toEqual([{ seq: 1 }, { seq: 2 }]);
    expect(await rowsOf(warehouse, 'SELECT count(*) AS n FROM order_trackings')).toEqual([{ n: '0' }]);
  });

  it('leaves the previous rows intact when a batch fails midway', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await loadLookupBatch(
      warehouse,
      {
        snapshots: [loaded(snapshotOf(trackingWire('247EXP0006')), SEEN_1)],
        results: [okLookupResult('247EXP0006', SEEN_1)],
      },
      spoolDir,
    );
    const before = await dump(warehouse);

    const newer = snapshotOf(
      wireWith('247EXP0006', (w) => {
        w.statuses = [];
      }),
    );
    // The snapshot rows are replaced first; the result row then breaks the outcome CHECK constraint.
    const broken = { ...okLookupResult('247EXP0006', SEEN_2, 'run-2'), outcome: 'exploded' as LookupOutcome };
    await expect(
      loadLookupBatch(warehouse, { snapshots: [loaded(newer, SEEN_2, 'run-2')], results: [broken] }, spoolDir),
    ).rejects.toThrow(/CHECK constraint/i);

    expect(await dump(warehouse)).toEqual(before);
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it('leaves the same rows when the same batch is loaded twice', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const batch = {
      snapshots: ['247EXP0007', '247EXP0008'].map((code) => loaded(snapshotOf(trackingWire(code)), SEEN_1)),
      results: [
        okLookupResult('247EXP0007', SEEN_1),
        okLookupResult('247EXP0008', SEEN_1),
        {
          ...okLookupResult('247EXP0009', SEEN_1),
          outcome: 'carrier_error' as const,
          errorCode: 'ORDERCODE_NOT_FOUND',
        },
      ],
    };
    await loadLookupBatch(warehouse, batch, spoolDir);
    const once = await dump(warehouse);
    await loadLookupBatch(warehouse, batch, spoolDir);
    expect(await dump(warehouse)).toEqual(once);
    expect(once.orders).toHaveLength(2);
    expect(once.charges).toHaveLength(8);
    expect(once.results).toHaveLength(3);
  });

  it('never rolls an order back to an older snapshot, but records the lookup', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const newer = snapshotOf(
      wireWith('247EXP0010', (w) => {
        w.status = '30';
      }),
    );
    await loadLookupBatch(warehouse, { snapshots: [loaded(newer, SEEN_2, 'run-2')], results: [] }, spoolDir);
    const older = snapshotOf(trackingWire('247EXP0010'));
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded(older, SEEN_1, 'run-1')], results: [okLookupResult('247EXP0010', SEEN_1, 'run-1')] },
      spoolDir,
    );

    expect(await rowsOf(warehouse, 'SELECT status, last_run_id, is_terminal FROM orders')).toEqual([
      { status: '30', last_run_id: 'run-2', is_terminal: true },
    ]);
    expect(await rowsOf(warehouse, 'SELECT count(*) AS n FROM order_statuses')).toEqual([{ n: '3' }]);
    expect(await rowsOf(warehouse, 'SELECT run_id FROM lookup_results')).toEqual([{ run_id: 'run-1' }]);
  });

  it('keeps the later of two snapshots of one order in a batch', async () => {
    const { warehouse, dir } = await temp.open();
    const first = snapshotOf(trackingWire('247EXP0011'));
    const second = snapshotOf(
      wireWith('247EXP0011', (w) => {
        w.status = '16';
      }),
    );
    await loadLookupBatch(
      warehouse,
      { snapshots: [loaded(second, SEEN_2), loaded(first, SEEN_1)], results: [] },
      join(dir, 'spool'),
    );
    expect(await rowsOf(warehouse, 'SELECT status FROM orders')).toEqual([{ status: '16' }]);
    expect(await rowsOf(warehouse, 'SELECT count(*) AS n FROM order_charges')).toEqual([{ n: '4' }]);
  });

  it('loads a large batch, leaving no file behind', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const codes = Array.from({ length: 4_500 }, (_, i) => `247EXP${String(i).padStart(6, '0')}`);
    const batch = {
      snapshots: snapshotsOf(codes).map((answer) => loaded(answer, SEEN_1)),
      results: codes.map((orderCode) => okLookupResult(orderCode, SEEN_1)),
    };
    await loadLookupBatch(warehouse, batch, spoolDir);
    await loadLookupBatch(warehouse, batch, spoolDir);
    expect(
      await rowsOf(
        warehouse,
        `SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(DISTINCT order_code) FROM order_charges) AS charged,
                (SELECT count(*) FROM order_trackings) AS trackings, (SELECT count(*) FROM lookup_results) AS results`,
      ),
    ).toEqual([{ orders: '4500', charged: '4500', trackings: '13500', results: '4500' }]);
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it('loads batches that do not fit beside the rows DuckDB holds until a checkpoint, by checkpointing first', async () => {
    // No automatic checkpoint: committed rows stay in DuckDB's memory, and after a few batches a
    // batch's staged answers no longer fit beside them within the limit. Loading goes on until a batch
    // has needed the checkpoint and the next one has loaded after it.
    const { warehouse, dir } = await temp.open('recon.duckdb', { memoryLimit: '48MB', checkpointThreshold: '1GB' });
    const spoolDir = join(dir, 'spool');
    const retried: string[] = [];
    warehouse.onLoadRetry((what) => retried.push(what));
    let batches = 0;
    let loadedAfterRetry = false;
    while (!loadedAfterRetry && batches < 9) {
      const retriedBefore = retried.length;
      const codes = Array.from({ length: 5_000 }, (_, i) => `247EXP${batches}${String(i).padStart(5, '0')}`);
      await loadLookupBatch(
        warehouse,
        {
          snapshots: snapshotsOf(codes).map((answer) => loaded(answer, SEEN_1)),
          results: codes.map((orderCode) => okLookupResult(orderCode, SEEN_1)),
        },
        spoolDir,
      );
      batches++;
      loadedAfterRetry = retriedBefore > 0;
    }
    expect(retried).toContain('a batch of 5000 lookups');
    expect(loadedAfterRetry).toBe(true);
    expect(
      await rowsOf(
        warehouse,
        'SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM order_trackings) AS trackings',
      ),
    ).toEqual([{ orders: String(5_000 * batches), trackings: String(15_000 * batches) }]);
  });

  it('names the memory limit when a batch does not fit even after a checkpoint', async () => {
    // The limit is lowered for the load alone: the migrations of a new warehouse can need more than 8MB.
    const { warehouse, dir } = await temp.open();
    const codes = ['247EXP000001', '247EXP000002'];
    const batch = {
      snapshots: codes.map((orderCode) => loaded(snapshotOf(trackingWire(orderCode)), SEEN_1)),
      results: codes.map((orderCode) => okLookupResult(orderCode, SEEN_1)),
    };
    const failure = await warehouse
      .withSettings({ memoryLimit: '8MB' }, () => loadLookupBatch(warehouse, batch, join(dir, 'spool')))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(WarehouseOutOfMemoryError);
    const outOfMemory = failure as WarehouseOutOfMemoryError;
    expect(outOfMemory.settings).toEqual(['batchSize', 'memoryLimit']);
    expect(failureLine(outOfMemory, 'command')).toMatch(
      /^DuckDB ran out of memory \(memory_limit 7\.6 MiB\) loading a batch of 2 lookups, even after a checkpoint: lower --batch-size or raise --memory-limit$/,
    );
    expect(await rowsOf(warehouse, 'SELECT count(*) AS orders FROM orders')).toEqual([{ orders: '0' }]);
  });

  it('replaces a lookup result of the same run and order', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const deferred: LookupResultRow = {
      ...okLookupResult('247EXP0012', SEEN_1),
      outcome: 'deferred',
      errorCode: 'QUOTA',
      errorMessage: 'left for a later run: quota',
      attempts: 0,
    };
    await loadLookupBatch(warehouse, { snapshots: [], results: [deferred] }, spoolDir);
    await loadLookupBatch(
      warehouse,
      {
        snapshots: [loaded(snapshotOf(trackingWire('247EXP0012')), SEEN_2)],
        results: [okLookupResult('247EXP0012', SEEN_2)],
      },
      spoolDir,
    );
    expect(await rowsOf(warehouse, 'SELECT outcome, error_code, attempts FROM lookup_results')).toEqual([
      { outcome: 'ok', error_code: null, attempts: 1 },
    ]);
  });

  it('dates every order: its accept date, else its earliest status or handling time, else when it was first stored', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const accepted = trackingWire('247EXP0021');
    // Received, never accepted: its status history starts before the handling history.
    const received = { ...trackingWire('247EXP0022'), acceptDate: null };
    // Cancelled before acceptance, with no history at all.
    const bare = { ...trackingWire('247EXP0023'), acceptDate: null, status: '18', statuses: [], trackings: [] };
    const wires = [accepted, received, bare];
    const load = async (seenAt: string, runId: string) =>
      loadLookupBatch(
        warehouse,
        {
          snapshots: wires.map((wire) => loaded(snapshotOf(wire), seenAt, runId)),
          results: wires.map((wire) => okLookupResult(wire.orderCode, seenAt, runId)),
        },
        spoolDir,
      );
    const instant = (column: string) => `strftime(${column}, '%Y-%m-%dT%H:%M:%S.%fZ')`;
    const dates = async () =>
      rowsOf(
        warehouse,
        `SELECT o.order_code, ${instant('o.order_date')} AS order_date, ${instant('a.order_date')} AS audit_order_date
         FROM orders AS o JOIN order_charge_audit AS a USING (order_code) ORDER BY o.order_code`,
      );
    const expected = (firstSeen: string) => [
      {
        order_code: '247EXP0021',
        order_date: '2026-11-09T02:15:30.123456Z',
        audit_order_date: '2026-11-09T02:15:30.123456Z',
      },
      {
        order_code: '247EXP0022',
        order_date: '2026-11-08T23:30:00.000000Z',
        audit_order_date: '2026-11-08T23:30:00.000000Z',
      },
      { order_code: '247EXP0023', order_date: firstSeen, audit_order_date: firstSeen },
    ];
    await load(SEEN_1, 'run-1');
    expect(await dates()).toEqual(expected(SEEN_1));
    // Seen again: the order without a date keeps the time it was first stored.
    await load(SEEN_2, 'run-2');
    expect(await dates()).toEqual(expected(SEEN_1));
  });
});
