import { describe, expect, it } from 'vitest';
import {
  CallbackMessageSchema,
  type CallbackMessageWire,
  carrierDayOf,
  checkOrderCode,
  checkPayload,
  checkTrackingResult,
  DELAY_REASONS,
  epochMsToInstant,
  findDelayReason,
  findOrderStatus,
  findTrackingErrorCode,
  formatCarrierDateTime,
  formatCarrierLocalDateTime,
  ImagesResultSchema,
  isTerminalStatus,
  moneyEquals,
  moneyFromNumber,
  nextCarrierDayStart,
  ORDER_STATUSES,
  type PayloadCheck,
  PRICE_SERVICE,
  PriceRequestSchema,
  PriceResultSchema,
  PUBLISHED_PRICING,
  parseCarrierInstant,
  shareOfMoney,
  subtractMoney,
  sumMoney,
  TERMINAL_STATUS_CODES,
  TRACKING_ERROR,
  type TrackingError,
  type TrackingSnapshot,
  type TrackingSnapshotWire,
} from '../src/carriers/247express/contract.js';
import { PUBLISHED_PRICE_ANSWER, PUBLISHED_PRICE_REQUEST } from './support/published-price-example.js';

// ---------------------------------------------------------------------------------------------
// Helpers and samples
// ---------------------------------------------------------------------------------------------

function accepted<T>(check: PayloadCheck<T>): T {
  if (!check.ok) throw new Error(`expected the payload to be accepted, got: ${check.message}`);
  return check.value;
}

function rejection(check: PayloadCheck<unknown>): string {
  if (check.ok) throw new Error('expected the payload to be rejected, but it was accepted');
  return check.message;
}

function snapshotOf(value: unknown): TrackingSnapshot {
  const result = accepted(checkTrackingResult(value));
  if (result.kind !== 'snapshot') throw new Error(`expected a snapshot, got kind ${result.kind}`);
  return result.snapshot;
}

function trackingErrorOf(value: unknown): TrackingError {
  const result = accepted(checkTrackingResult(value));
  if (result.kind !== 'error') throw new Error(`expected an error result, got kind ${result.kind}`);
  return result.error;
}

/** A delivered order, shaped exactly as the field tables of docs/carriers/247express.md (camelCase, explicit nulls). */
function trackingSample(): TrackingSnapshotWire {
  return {
    errorMessage: null,
    errorCode: null,
    orderCode: '247EXP0001234',
    externalCode: 'SHOP-2019-0815',
    acceptDate: '2019-08-05T09:15:30+07:00',
    status: '30',
    statusName: 'PHATTHANHCONG',
    trackingName: 'Phát thành công',
    delayCode: null,
    delayNote: null,
    deliveryNotes: 'Giao tận tay người nhận',
    deliveryDate: '2019-08-07T11:24:12+07:00',
    poDeliveryID: null,
    mailMan: null,
    receiverName: 'Nguyễn Thị Hương',
    serviceTypeID: 'DE',
    mailerTypeID: 'HH',
    extraServiceName: null,
    length: 60,
    width: 60,
    height: 60,
    realWeight: 60,
    calWeight: 36,
    weight: 60,
    quantity: 1,
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
        time: '2019-08-05T06:30:00+07:00',
        status: '21',
        statusName: 'DATIEPNHAN',
        trackingName: 'Đã tiếp nhận',
        provinceName: 'Hồ Chí Minh',
        postOfficeName: 'Bưu cục Tân Bình',
      },
      {
        time: '2019-08-05T09:15:30+07:00',
        status: '23',
        statusName: 'DALAYHANG',
        trackingName: 'Đã lấy hàng',
        provinceName: 'Hồ Chí Minh',
        postOfficeName: 'Bưu cục Tân Bình',
      },
      {
        time: '2019-08-05T22:40:00+07:00',
        status: '24',
        statusName: 'DANGVANCHUYEN',
        trackingName: 'Đang vận chuyển',
        provinceName: 'Hồ Chí Minh',
        postOfficeName: 'Trung tâm khai thác Tân Sơn Nhất',
      },
      {
        time: '2019-08-07T08:05:00+07:00',
        status: '25',
        statusName: 'DANGDIPHAT',
        trackingName: 'Đang đi phát',
        provinceName: 'Hà Nội',
        postOfficeName: 'Bưu cục Cầu Giấy',
      },
      {
        time: '2019-08-07T11:24:12+07:00',
        status: '30',
        statusName: 'PHATTHANHCONG',
        trackingName: 'Phát thành công',
        provinceName: 'Hà Nội',
        postOfficeName: 'Bưu cục Cầu Giấy',
      },
    ],
    trackings: [
      trackingEvent(
        '0',
        'Nhập hệ thống',
        'HCM01',
        'Bưu cục Tân Bình',
        '79',
        'Hồ Chí Minh',
        '2019-08-05T09:20:00+07:00',
        null,
      ),
      trackingEvent(
        '2',
        'Đóng túi',
        'HCM01',
        'Bưu cục Tân Bình',
        '79',
        'Hồ Chí Minh',
        '2019-08-05T18:00:00+07:00',
        null,
      ),
      trackingEvent(
        '3',
        'Đang chuyển tiếp',
        'HCMTT',
        'Trung tâm khai thác Tân Sơn Nhất',
        '79',
        'Hồ Chí Minh',
        '2019-08-05T22:40:00+07:00',
        'Chuyến bay VN216',
      ),
      trackingEvent('4', 'Đến bưu cục', 'HN05', 'Bưu cục Cầu Giấy', '01', 'Hà Nội', '2019-08-06T14:10:00+07:00', null),
      trackingEvent(
        '10',
        'Giao bưu tá đi phát',
        'HN05',
        'Bưu cục Cầu Giấy',
        '01',
        'Hà Nội',
        '2019-08-07T07:55:00+07:00',
        null,
      ),
      trackingEvent('5', 'Đang phát', 'HN05', 'Bưu cục Cầu Giấy', '01', 'Hà Nội', '2019-08-07T08:05:00+07:00', null),
    ],
    estimateRoutes: null,
    confirmImage: null,
  };
}

function trackingEvent(
  statusID: string,
  statusName: string,
  postOfficeID: string,
  postOfficeName: string,
  provinceID: string,
  provinceName: string,
  dateChange: string,
  notes: string | null,
) {
  return { statusID, statusName, postOfficeID, postOfficeName, provinceID, provinceName, dateChange, notes };
}

/** A deep copy of the tracking sample changed by `edit`, which may break its types on purpose. */
function trackingSampleWith(edit: (draft: Record<string, any>) => void): unknown {
  const draft = structuredClone(trackingSample()) as Record<string, any>;
  edit(draft);
  return draft;
}

// ---------------------------------------------------------------------------------------------
// 1. Tracking result: snapshots
// ---------------------------------------------------------------------------------------------

describe('checkTrackingResult: a snapshot', () => {
  it('accepts the documented shape and reads it as a snapshot', () => {
    const result = accepted(checkTrackingResult(trackingSample()));
    expect(result.kind).toBe('snapshot');
  });

  it('hands dates on as UTC instants with six fractional digits', () => {
    const snapshot = snapshotOf(trackingSample());
    expect(snapshot.deliveryDate).toBe('2019-08-07T04:24:12.000000Z');
    expect(snapshot.acceptDate).toBe('2019-08-05T02:15:30.000000Z');
    // 06:30 at UTC+07:00 is the previous UTC day.
    expect(snapshot.statuses[0]?.time).toBe('2019-08-04T23:30:00.000000Z');
    expect(snapshot.statuses.map((s) => s.time)).toEqual([
      '2019-08-04T23:30:00.000000Z',
      '2019-08-05T02:15:30.000000Z',
      '2019-08-05T15:40:00.000000Z',
      '2019-08-07T01:05:00.000000Z',
      '2019-08-07T04:24:12.000000Z',
    ]);
    expect(snapshot.trackings.map((t) => t.dateChange)).toEqual([
      '2019-08-05T02:20:00.000000Z',
      '2019-08-05T11:00:00.000000Z',
      '2019-08-05T15:40:00.000000Z',
      '2019-08-06T07:10:00.000000Z',
      '2019-08-07T00:55:00.000000Z',
      '2019-08-07T01:05:00.000000Z',
    ]);
  });

  it('hands money on as exact decimal strings', () => {
    const snapshot = snapshotOf(trackingSample());
    expect(snapshot.price).toBe('1184800');
    expect(snapshot.priceFR).toBe('0');
    expect(snapshot.farRegionFeeAmount).toBe('50000');
    expect(snapshot.fuelFeeAmount).toBe('236960');
    expect(snapshot.vatAmount).toBe('147176');
    expect(snapshot.totalServiceCost).toBe('1618936');
    expect(snapshot.codAmount).toBe('0');
    expect(snapshot.priceInfo).toEqual([
      { serviceName: 'Chuyển phát nhanh', serviceID: 'DE', cost: '1184800' },
      { serviceName: 'Phụ phí vùng sâu vùng xa', serviceID: 'VSVX', cost: '50000' },
      { serviceName: 'Phụ phí xăng dầu', serviceID: 'Fuel', cost: '236960' },
      { serviceName: 'Thuế GTGT', serviceID: 'VAT', cost: '147176' },
    ]);
    expect(sumMoney(snapshot.priceInfo.map((line) => line.cost))).toBe(snapshot.totalServiceCost);
  });

  it('keeps fractional amounts exact', () => {
    const snapshot = snapshotOf(
      trackingSampleWith((d) => {
        d.price = 0.1;
        d.priceInfo[0].cost = 0.1;
        d.priceInfo[1].cost = 0.2;
      }),
    );
    expect(snapshot.price).toBe('0.1');
    expect(snapshot.priceInfo[1]?.cost).toBe('0.2');
  });

  it('keeps text, measures and documented nulls as they came', () => {
    const snapshot = snapshotOf(trackingSample());
    expect(snapshot.orderCode).toBe('247EXP0001234');
    expect(snapshot.receiverName).toBe('Nguyễn Thị Hương');
    expect(snapshot.trackingName).toBe('Phát thành công');
    expect(snapshot.statuses[3]?.postOfficeName).toBe('Bưu cục Cầu Giấy');
    expect(snapshot.trackings[2]?.notes).toBe('Chuyến bay VN216');
    expect(snapshot.trackings[0]?.notes).toBeNull();
    expect(snapshot.delayCode).toBeNull();
    expect(snapshot.extraServiceName).toBeNull();
    expect(snapshot.mailMan).toBeNull();
    expect(snapshot.estimateRoutes).toBeNull();
    expect([snapshot.length, snapshot.width, snapshot.height]).toEqual([60, 60, 60]);
    expect([snapshot.realWeight, snapshot.calWeight, snapshot.weight, snapshot.quantity]).toEqual([60, 36, 60, 1]);
  });

  it('accepts and keeps extra fields it does not know, at the top and inside items', () => {
    const snapshot = snapshotOf(
      trackingSampleWith((d) => {
        d.returnReasonNote = 'trường mới';
        d.customerInfo = { tier: 'gold' };
        d.priceInfo[0].discount = 0;
        d.statuses[0].lat = 10.8;
      }),
    );
    expect(snapshot.returnReasonNote).toBe('trường mới');
    expect(snapshot.customerInfo).toEqual({ tier: 'gold' });
    expect(snapshot.priceInfo[0]?.discount).toBe(0);
    expect(snapshot.statuses[0]?.lat).toBe(10.8);
  });

  it('reads null priceInfo, statuses and trackings as empty lists', () => {
    const snapshot = snapshotOf(
      trackingSampleWith((d) => {
        d.priceInfo = null;
        d.statuses = null;
        d.trackings = null;
      }),
    );
    expect(snapshot.priceInfo).toEqual([]);
    expect(snapshot.statuses).toEqual([]);
    expect(snapshot.trackings).toEqual([]);
  });

  it('accepts a null deliveryDate (order not delivered yet)', () => {
    const snapshot = snapshotOf(
      trackingSampleWith((d) => {
        d.status = '25';
        d.statusName = 'DANGDIPHAT';
        d.deliveryDate = null;
        d.receiverName = null;
      }),
    );
    expect(snapshot.deliveryDate).toBeNull();
    expect(snapshot.receiverName).toBeNull();
  });

  it('accepts status, step and delay codes outside the reference tables, as data', () => {
    const snapshot = snapshotOf(
      trackingSampleWith((d) => {
        d.status = '99';
        d.statusName = 'TAMGIU';
        d.delayCode = '77';
        d.delayNote = 'Lý do mới';
        d.statuses[4].status = '30';
        d.statuses[4].statusName = 'HOANTAT';
        d.trackings[5].statusID = '42';
      }),
    );
    expect(snapshot.status).toBe('99');
    expect(findOrderStatus(snapshot.status)).toBeUndefined();
    expect(snapshot.statuses[4]?.statusName).toBe('HOANTAT');
    expect(snapshot.delayCode).toBe('77');
    expect(findDelayReason('77')).toBeUndefined();
    expect(snapshot.trackings[5]?.statusID).toBe('42');
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Tracking result: errors
// ---------------------------------------------------------------------------------------------

describe('checkTrackingResult: an error answer', () => {
  /** The error answer: the same object with errorCode and errorMessage filled, every other field null. */
  function errorAnswer(errorCode: string, errorMessage: string): Record<string, unknown> {
    const answer: Record<string, unknown> = Object.fromEntries(Object.keys(trackingSample()).map((key) => [key, null]));
    answer.errorCode = errorCode;
    answer.errorMessage = errorMessage;
    return answer;
  }

  it('reads ORDERCODE_NOT_FOUND with the other fields null as kind error', () => {
    const error = trackingErrorOf(errorAnswer('ORDERCODE_NOT_FOUND', 'Mã vận đơn không tồn tại'));
    expect(error.errorCode).toBe(TRACKING_ERROR.ORDERCODE_NOT_FOUND);
    expect(error.errorMessage).toBe('Mã vận đơn không tồn tại');
    expect(error.orderCode).toBeNull();
  });

  it('accepts an error code outside the documented table (ORDERCODE_QUERY_EXPIRED)', () => {
    const error = trackingErrorOf(errorAnswer('ORDERCODE_QUERY_EXPIRED', 'Quá thời hạn tra cứu'));
    expect(error.errorCode).toBe('ORDERCODE_QUERY_EXPIRED');
  });

  it('accepts an error code no table knows, and the lookup says it is unknown', () => {
    const error = trackingErrorOf(errorAnswer('SOMETHING_NEW', 'Lỗi mới'));
    expect(error.errorCode).toBe('SOMETHING_NEW');
    expect(findTrackingErrorCode('SOMETHING_NEW')).toBeUndefined();
  });

  it('rejects an errorCode that is not a string, naming errorCode', () => {
    const answer = errorAnswer('x', 'y');
    answer.errorCode = 404;
    expect(rejection(checkTrackingResult(answer))).toContain('errorCode');
  });

  it('rejects a payload that is not an object', () => {
    expect(checkTrackingResult('ORDERCODE_NOT_FOUND').ok).toBe(false);
    expect(checkTrackingResult(null).ok).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Tracking result: wrong types name the field path
// ---------------------------------------------------------------------------------------------

describe('checkTrackingResult: wrong types are rejected naming the field', () => {
  it.each([
    [
      'price as a string',
      'price',
      (d: Record<string, any>) => {
        d.price = '1184800';
      },
    ],
    [
      'priceInfo[1].cost as a string',
      'priceInfo[1].cost',
      (d: Record<string, any>) => {
        d.priceInfo[1].cost = '50000';
      },
    ],
    ['priceInfo[1].cost missing', 'priceInfo[1].cost', (d: Record<string, any>) => void delete d.priceInfo[1].cost],
    [
      'statuses[0].time not a date',
      'statuses[0].time',
      (d: Record<string, any>) => {
        d.statuses[0].time = 'hôm qua';
      },
    ],
    [
      'statuses[0].time an impossible date',
      'statuses[0].time',
      (d: Record<string, any>) => {
        d.statuses[0].time = '2019-02-30T10:00:00+07:00';
      },
    ],
    [
      'trackings[3].dateChange not a date',
      'trackings[3].dateChange',
      (d: Record<string, any>) => {
        d.trackings[3].dateChange = '';
      },
    ],
    [
      'deliveryDate not a date',
      'deliveryDate',
      (d: Record<string, any>) => {
        d.deliveryDate = '07/08/2019';
      },
    ],
    [
      'quantity 1.5',
      'quantity',
      (d: Record<string, any>) => {
        d.quantity = 1.5;
      },
    ],
    [
      'weight as a string',
      'weight',
      (d: Record<string, any>) => {
        d.weight = '60';
      },
    ],
    [
      'status as a number',
      'status',
      (d: Record<string, any>) => {
        d.status = 30;
      },
    ],
    ['orderCode missing', 'orderCode', (d: Record<string, any>) => void delete d.orderCode],
    [
      'statuses not a list',
      'statuses',
      (d: Record<string, any>) => {
        d.statuses = { time: '2019-08-07T11:24:12+07:00' };
      },
    ],
  ])('%s: message names %s', (_case, field, edit) => {
    const message = rejection(checkTrackingResult(trackingSampleWith(edit)));
    expect(message).toContain(field);
    expect(message).toContain('tracking result');
  });

  it('names every wrong field when several are wrong', () => {
    const message = rejection(
      checkTrackingResult(
        trackingSampleWith((d) => {
          d.price = 'x';
          d.quantity = 1.5;
        }),
      ),
    );
    expect(message).toContain('price');
    expect(message).toContain('quantity');
  });
});

// ---------------------------------------------------------------------------------------------
// 4. Carrier time
// ---------------------------------------------------------------------------------------------

describe('parseCarrierInstant', () => {
  it.each([
    ['2019-08-07T11:24:12+07:00', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-07T11:24:12.4+07:00', '2019-08-07T04:24:12.400000Z'],
    ['2019-08-07T11:24:12.49+07:00', '2019-08-07T04:24:12.490000Z'],
    ['2019-08-07T11:24:12.494+07:00', '2019-08-07T04:24:12.494000Z'],
    ['2019-08-07T11:24:12.4946+07:00', '2019-08-07T04:24:12.494600Z'],
    ['2019-08-07T11:24:12.49462+07:00', '2019-08-07T04:24:12.494620Z'],
    ['2019-08-07T11:24:12.494622+07:00', '2019-08-07T04:24:12.494622Z'],
    ['2019-08-07T11:24:12.4946223+07:00', '2019-08-07T04:24:12.494622Z'],
  ])('reads %s (0 to 7 fractional digits) as %s', (text, instant) => {
    expect(parseCarrierInstant(text)).toBe(instant);
  });

  it.each([
    ['2019-08-07 11:24:12', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-07T11:24:12', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-07T03:00:00', '2019-08-06T20:00:00.000000Z'],
  ])('reads %s, which has no offset, as carrier-local UTC+07:00: %s', (text, instant) => {
    expect(parseCarrierInstant(text)).toBe(instant);
  });

  it.each([
    ['2019-08-07T04:24:12Z', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-07T04:24:12.5Z', '2019-08-07T04:24:12.500000Z'],
    ['2019-08-07T04:24:12+00:00', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-06T23:24:12-05:00', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-07T05:54:12+01:30', '2019-08-07T04:24:12.000000Z'],
    ['2019-08-07T11:24:12+0700', '2019-08-07T04:24:12.000000Z'],
    ['2020-01-01T00:00:00+07:00', '2019-12-31T17:00:00.000000Z'],
    ['2020-02-29T06:00:00+07:00', '2020-02-28T23:00:00.000000Z'],
  ])('reads %s with its own offset as %s', (text, instant) => {
    expect(parseCarrierInstant(text)).toBe(instant);
  });

  it('reads years 0000 to 0099 as written, not as 1900 to 1999', () => {
    expect(parseCarrierInstant('0019-08-07T11:24:12+07:00')).toBe('0019-08-07T04:24:12.000000Z');
    // .NET's DateTime.MinValue, a plausible "no date" from the carrier.
    expect(parseCarrierInstant('0001-01-01T00:00:00')).toBe('0000-12-31T17:00:00.000000Z');
  });

  it.each(['2019-08-07T11:24:12+99:99', '2019-08-07T11:24:12+07:60', '2019-08-07T11:24:12-24:00'])(
    'returns undefined for the impossible offset in %s',
    (text) => {
      expect(parseCarrierInstant(text)).toBeUndefined();
    },
  );

  it('returns undefined when the instant falls outside years 0000 to 9999', () => {
    expect(parseCarrierInstant('9999-12-31T23:00:00-05:00')).toBeUndefined();
    expect(parseCarrierInstant('9999-12-31T23:00:00+07:00')).toBe('9999-12-31T16:00:00.000000Z');
  });

  it('agrees with Date.parse to the millisecond whenever an offset is given', () => {
    for (const text of ['2019-08-07T11:24:12.494+07:00', '2021-03-01T00:00:00-03:30', '1999-12-31T23:59:59.999Z']) {
      const instant = parseCarrierInstant(text);
      expect(instant).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect(Date.parse(instant!)).toBe(Date.parse(text));
    }
  });

  it.each([
    '2019-02-30T10:00:00+07:00',
    '2019-02-29T10:00:00+07:00',
    '2019-04-31 10:00:00',
    '2019-13-01T10:00:00+07:00',
    '2019-00-10T10:00:00+07:00',
    '2019-08-07T24:00:00+07:00',
    '2019-08-07T11:60:00+07:00',
    '2019-08-07T11:24:60+07:00',
  ])('returns undefined for the impossible date-time %s', (text) => {
    expect(parseCarrierInstant(text)).toBeUndefined();
  });

  it.each([
    '',
    'not a date',
    'hôm qua',
    '2019-08-07',
    '07/08/2019 11:24:12',
    '2019-08-07T11:24:12.49462231+07:00',
    '2019-08-07T11:24:12+07:00 and more',
    '1565151852',
  ])('returns undefined for garbage %j', (text) => {
    expect(parseCarrierInstant(text)).toBeUndefined();
  });
});

describe('carrier day (midnight at UTC+07:00)', () => {
  const lastMomentOfDay = Date.parse('2026-11-21T16:59:59.999Z');
  const midnightLocal = Date.parse('2026-11-21T17:00:00Z');

  it('puts 16:59:59Z in the same carrier day and 17:00:00Z in the next', () => {
    expect(carrierDayOf(Date.parse('2026-11-21T16:59:59Z'))).toBe('2026-11-21');
    expect(carrierDayOf(lastMomentOfDay)).toBe('2026-11-21');
    expect(carrierDayOf(midnightLocal)).toBe('2026-11-22');
    // Early UTC morning is already well into the carrier day.
    expect(carrierDayOf(Date.parse('2026-11-21T00:00:00Z'))).toBe('2026-11-21');
  });

  it('gives the next carrier day start as 17:00Z, also from that start itself', () => {
    expect(nextCarrierDayStart(Date.parse('2026-11-21T16:59:59Z'))).toBe(midnightLocal);
    expect(nextCarrierDayStart(Date.parse('2026-11-20T17:00:00Z'))).toBe(midnightLocal);
    expect(nextCarrierDayStart(Date.parse('2026-11-21T00:00:00Z'))).toBe(midnightLocal);
    expect(nextCarrierDayStart(midnightLocal)).toBe(Date.parse('2026-11-22T17:00:00Z'));
  });

  it('keeps day and next start consistent', () => {
    for (const ms of [
      lastMomentOfDay,
      midnightLocal,
      Date.parse('2024-02-28T20:30:00Z'),
      Date.parse('2019-12-31T17:00:00Z'),
    ]) {
      const next = nextCarrierDayStart(ms);
      expect(next).toBeGreaterThan(ms);
      expect(next - ms).toBeLessThanOrEqual(86_400_000);
      expect(carrierDayOf(next - 1)).toBe(carrierDayOf(ms));
      expect(carrierDayOf(next)).not.toBe(carrierDayOf(ms));
    }
  });

  it('honours a configured offset', () => {
    expect(carrierDayOf(midnightLocal, 0)).toBe('2026-11-21');
    expect(nextCarrierDayStart(midnightLocal, 0)).toBe(Date.parse('2026-11-22T00:00:00Z'));
    expect(carrierDayOf(Date.parse('2026-11-22T03:00:00Z'), -300)).toBe('2026-11-21');
  });
});

describe('formatting carrier date-times', () => {
  const deliveredAt = Date.parse('2019-08-07T04:24:12.494Z');

  it('writes local time at +07:00, with a fraction when asked', () => {
    expect(formatCarrierDateTime(deliveredAt)).toBe('2019-08-07T11:24:12+07:00');
    expect(formatCarrierDateTime(deliveredAt, 3)).toBe('2019-08-07T11:24:12.494+07:00');
    expect(formatCarrierDateTime(deliveredAt, 7, '6223')).toBe('2019-08-07T11:24:12.4946223+07:00');
    expect(formatCarrierLocalDateTime(deliveredAt)).toBe('2019-08-07 11:24:12');
  });

  it('round-trips through parseCarrierInstant', () => {
    for (const ms of [deliveredAt, Date.parse('2019-12-31T17:00:00.001Z'), Date.parse('2026-11-21T16:59:59.999Z'), 0]) {
      const wholeSecond = ms - (ms % 1000);
      expect(parseCarrierInstant(formatCarrierDateTime(ms))).toBe(epochMsToInstant(wholeSecond));
      expect(parseCarrierInstant(formatCarrierDateTime(ms, 3))).toBe(epochMsToInstant(ms));
      expect(parseCarrierInstant(formatCarrierLocalDateTime(ms))).toBe(epochMsToInstant(wholeSecond));
    }
    expect(parseCarrierInstant(formatCarrierDateTime(deliveredAt, 7, '6223'))).toBe('2019-08-07T04:24:12.494622Z');
  });

  it('writes whole seconds as Date does, before 1970, across day ends and at the ends of four-digit years', () => {
    const localOf = (ms: number, offsetMinutes = 420) => new Date(ms + offsetMinutes * 60_000).toISOString();
    const instants = [
      0,
      -1,
      -25_200_000,
      -25_200_001,
      Date.parse('2026-11-21T16:59:59.999Z'),
      Date.parse('2026-11-21T17:00:00Z'),
      Date.parse('0000-01-01T00:00:00Z') - 25_200_000,
      Date.parse('9999-12-31T23:59:59.999Z') - 25_200_000,
    ];
    for (let i = 0; i < 2_000; i++) instants.push(Math.round((i - 1_000) * 7_919_000_003.7));
    for (const ms of instants) {
      expect(formatCarrierDateTime(ms)).toBe(`${localOf(ms).slice(0, 19)}+07:00`);
      expect(carrierDayOf(ms)).toBe(localOf(ms).slice(0, 10));
      expect(carrierDayOf(ms, -300)).toBe(localOf(ms, -300).slice(0, 10));
    }
    // Outside four-digit years, as Date writes them.
    const farFuture = Date.parse('9999-12-31T17:00:00Z');
    expect(formatCarrierDateTime(farFuture)).toBe(`${localOf(farFuture).slice(0, 19)}+07:00`);
    expect(carrierDayOf(farFuture)).toBe(localOf(farFuture).slice(0, 10));
  });
});

// ---------------------------------------------------------------------------------------------
// 5. The published price example
// ---------------------------------------------------------------------------------------------

describe('the published price example', () => {
  const request = PUBLISHED_PRICE_REQUEST;
  const answer = PUBLISHED_PRICE_ANSWER;

  function parsedAnswer() {
    return accepted(checkPayload(PriceResultSchema, answer, 'price result'));
  }

  function costOf(serviceID: string): string {
    const line = parsedAnswer().ExtraServices.find((s) => s.ServiceID === serviceID);
    if (!line) throw new Error(`no ${serviceID} line`);
    return line.Cost;
  }

  it('passes PriceRequestSchema and PriceResultSchema', () => {
    accepted(checkPayload(PriceRequestSchema, request, 'price request'));
    const result = parsedAnswer();
    expect(result.IsError).toBe(false);
    expect(result.Errors).toEqual([]);
    expect(result.ErrorMessage).toBe('');
    expect(result.ExtraServices.map((s) => [s.ServiceID, s.Type, s.Cost])).toEqual([
      ['DE', 1, '1184800'],
      ['Fuel', 3, '236960'],
      ['VAT', 3, '142176'],
    ]);
    expect(result.TotalServiceCost).toBe('1563936');
    // MainPrice is 0 in the published example: it is kept, not relied on.
    expect(result.MainPrice).toBe('0');
    expect(result.ExtraServices[1]?.FromDate).toBe('2018-12-31T17:00:00.000000Z');
    expect(result.ExtraServices[1]?.ToDate).toBe('2099-12-31T16:59:59.000000Z');
    expect(result.ExtraServices[0]?.Detail).toBeNull();
  });

  it('has lines that sum to TotalServiceCost', () => {
    const result = parsedAnswer();
    expect(sumMoney(result.ExtraServices.map((s) => s.Cost))).toBe(result.TotalServiceCost);
  });

  it('has fuel = 20% of main and VAT = 10% of main plus fuel', () => {
    const main = costOf(PRICE_SERVICE.MAIN);
    const fuel = costOf(PRICE_SERVICE.FUEL);
    expect(shareOfMoney(main, PUBLISHED_PRICING.fuelShare)).toBe(fuel);
    expect(shareOfMoney(sumMoney([main, fuel]), PUBLISHED_PRICING.vatShare)).toBe(costOf(PRICE_SERVICE.VAT));
  });

  it('has CalWeight = L x W x H / divisor and Weight = max(RealWeight, CalWeight)', () => {
    const result = parsedAnswer();
    expect((request.Length * request.Width * request.Height) / PUBLISHED_PRICING.volumetricDivisor).toBe(
      result.CalWeight,
    );
    expect(result.CalWeight).toBe(36);
    expect(Math.max(request.RealWeight, result.CalWeight)).toBe(result.Weight);
  });

  it('rejects a Cost sent as text, naming the line', () => {
    const wrong = structuredClone(answer) as Record<string, any>;
    wrong.ExtraServices[2].Cost = '142176';
    expect(rejection(checkPayload(PriceResultSchema, wrong, 'price result'))).toContain('ExtraServices[2].Cost');
  });
});

// ---------------------------------------------------------------------------------------------
// 6. Money exactness
// ---------------------------------------------------------------------------------------------

describe('money', () => {
  it('sums in decimal, where a float sum drifts', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(sumMoney([0.1, 0.2])).toBe('0.3');
    expect(sumMoney([moneyFromNumber(0.1), moneyFromNumber(0.2)])).toBe('0.3');
    expect(sumMoney(['1184800', 236960, '142176'])).toBe('1563936');
    expect(sumMoney([])).toBe('0');
  });

  it('writes a number as its shortest exact decimal text', () => {
    expect(moneyFromNumber(1184800.0)).toBe('1184800');
    expect(moneyFromNumber(0)).toBe('0');
    expect(moneyFromNumber(-0)).toBe('0');
    expect(moneyFromNumber(0.1)).toBe('0.1');
    expect(moneyFromNumber(12345.67)).toBe('12345.67');
  });

  it('rounds shares half-up to the given places', () => {
    expect(shareOfMoney('12345', '0.1')).toBe('1235');
    expect(shareOfMoney('12344', '0.1')).toBe('1234');
    expect(shareOfMoney('10.05', 1, 1)).toBe('10.1');
  });

  it('subtracts and compares exactly', () => {
    expect(subtractMoney(0.3, 0.1)).toBe('0.2');
    expect(moneyEquals('1563936', 1563936.0)).toBe(true);
    expect(moneyEquals('0.3', 0.1 + 0.2)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// 7. Status callback
// ---------------------------------------------------------------------------------------------

describe('CallbackMessageSchema', () => {
  function callbackSample(): CallbackMessageWire {
    return {
      Time: '2019-08-07T11:24:12.4946223+07:00',
      TransactionId: '5f0c1e2a-7d4b-4c1e-9a3f-2b8e6d1c0a77',
      DeliveryDate: '2019-08-07 11:24:12',
      ReceiverName: 'Trần Văn Nam',
      Mailman: 'Lê Minh Tuấn',
      DeliveryNotes: 'Đã giao hàng cho người nhận',
      DelayNotes: null,
      RequestFeedbackCount: 0,
      Description: 'Phát thành công',
      Status: '30',
      StatusName: 'PHATTHANHCONG',
      OrderCode: '247EXP0001234',
      ApiKey: '<API_KEY>',
      DelayCode: null,
      ExternalCode: 'SHOP-2019-0815',
      ReferenceCode: null,
    };
  }

  function callbackWith(edit: (draft: Record<string, any>) => void): unknown {
    const draft = callbackSample() as Record<string, any>;
    edit(draft);
    return draft;
  }

  it('accepts the published shape and hands its times on as UTC instants', () => {
    const message = accepted(checkPayload(CallbackMessageSchema, callbackSample(), 'callback'));
    expect(message.Time).toBe('2019-08-07T04:24:12.494622Z');
    expect(message.DeliveryDate).toBe('2019-08-07T04:24:12.000000Z');
    expect(message.Status).toBe('30');
    expect(message.OrderCode).toBe('247EXP0001234');
    expect(message.ApiKey).toBe('<API_KEY>');
    expect(message.ReceiverName).toBe('Trần Văn Nam');
    expect(message.RequestFeedbackCount).toBe(0);
    expect(message.DelayCode).toBeNull();
    expect(message.ReferenceCode).toBeNull();
  });

  it('accepts a failed-delivery callback with a null DeliveryDate', () => {
    const message = accepted(
      checkPayload(
        CallbackMessageSchema,
        callbackWith((d) => {
          d.Status = '16';
          d.StatusName = 'CHOXULY';
          d.DeliveryDate = null;
          d.DelayCode = '12';
          d.DelayNotes = 'Người nhận không nghe máy';
        }),
        'callback',
      ),
    );
    expect(message.DeliveryDate).toBeNull();
    expect(message.DelayCode).toBe('12');
  });

  it('rejects a Time that is not a date, naming Time', () => {
    const message = rejection(
      checkPayload(
        CallbackMessageSchema,
        callbackWith((d) => {
          d.Time = 'now';
        }),
        'callback',
      ),
    );
    expect(message).toContain('Time');
  });

  it('rejects a missing OrderCode, naming OrderCode', () => {
    const message = rejection(
      checkPayload(
        CallbackMessageSchema,
        callbackWith((d) => void delete d.OrderCode),
        'callback',
      ),
    );
    expect(message).toContain('OrderCode');
  });

  it('rejects a Status sent as a number, naming Status', () => {
    const message = rejection(
      checkPayload(
        CallbackMessageSchema,
        callbackWith((d) => {
          d.Status = 30;
        }),
        'callback',
      ),
    );
    expect(message).toContain('Status');
  });
});

// ---------------------------------------------------------------------------------------------
// 8. Images and price request
// ---------------------------------------------------------------------------------------------

describe('ImagesResultSchema and PriceRequestSchema', () => {
  it('accepts an image list', () => {
    const result = accepted(
      checkPayload(
        ImagesResultSchema,
        {
          Items: [{ No: 1, OrderCode: '247EXP0001234', ImageURL: 'https://img.example.vn/247EXP0001234/1.jpg' }],
          Errors: [],
          ErrorMessage: '',
        },
        'images result',
      ),
    );
    expect(result.Items).toEqual([
      { No: 1, OrderCode: '247EXP0001234', ImageURL: 'https://img.example.vn/247EXP0001234/1.jpg' },
    ]);
    expect(result.ErrorMessage).toBe('');
  });

  it('rejects an image item whose No is not an integer, naming it', () => {
    const check = checkPayload(
      ImagesResultSchema,
      { Items: [{ No: '1', OrderCode: '247EXP0001234', ImageURL: 'x' }], Errors: [], ErrorMessage: '' },
      'images result',
    );
    expect(rejection(check)).toContain('Items[0].No');
  });

  it('rejects a price request whose Length is text, naming Length', () => {
    const check = checkPayload(
      PriceRequestSchema,
      {
        ToProvinceName: 'Hà Nội',
        ToDistrictName: 'Quận Cầu Giấy',
        ToWardName: 'Phường Dịch Vọng',
        Length: '60',
        Width: 60,
        Height: 60,
        RealWeight: 60,
        ClientHubID: '1001',
        ServiceTypeID: 'DE',
      },
      'price request',
    );
    expect(rejection(check)).toContain('Length');
  });
});

// ---------------------------------------------------------------------------------------------
// 9. JSON bodies
// ---------------------------------------------------------------------------------------------

describe('checkPayload of a decoded JSON body', () => {
  it('validates it, naming the payload and the wrong field', () => {
    const body = JSON.parse(JSON.stringify({ Items: null, Errors: [], ErrorMessage: '' })) as unknown;
    expect(accepted(checkPayload(ImagesResultSchema, body, 'images result')).Items).toEqual([]);
    const wrong = JSON.parse(JSON.stringify({ Items: [], Errors: [], ErrorMessage: 5 })) as unknown;
    const message = rejection(checkPayload(ImagesResultSchema, wrong, 'images result'));
    expect(message).toContain('images result');
    expect(message).toContain('ErrorMessage');
  });
});

// ---------------------------------------------------------------------------------------------
// 10. Reference data and order codes
// ---------------------------------------------------------------------------------------------

describe('reference data', () => {
  it('has exactly the 11 statuses of the spec', () => {
    expect(ORDER_STATUSES).toHaveLength(11);
    expect(Object.fromEntries(ORDER_STATUSES.map((s) => [s.code, s.name]))).toEqual({
      '21': 'DATIEPNHAN',
      '23': 'DALAYHANG',
      '24': 'DANGVANCHUYEN',
      '25': 'DANGDIPHAT',
      '30': 'PHATTHANHCONG',
      '16': 'CHOXULY',
      '27': 'CHOCHUYENHOAN',
      '28': 'DACHUYENHOAN',
      '19': 'THATLAC',
      '18': 'HUY',
      '32': 'TICHTHU',
    });
  });

  it('marks exactly 30, 28, 19, 18 and 32 terminal', () => {
    expect([...TERMINAL_STATUS_CODES].sort()).toEqual(['18', '19', '28', '30', '32']);
    for (const status of ORDER_STATUSES) {
      expect(isTerminalStatus(status.code), status.code).toBe(['30', '28', '19', '18', '32'].includes(status.code));
    }
    expect(isTerminalStatus('99')).toBe(false);
  });

  it('has the 31 delay reasons of the spec', () => {
    const specCodes = [
      '01',
      '02',
      '03',
      '04',
      '05',
      '06',
      '07',
      '08',
      '09',
      '10',
      '11',
      '12',
      '13',
      '14',
      '15',
      '16',
      '20',
      '21',
      '22',
      '24',
      '26',
      '30',
      '31',
      '33',
      '35',
      '40',
      '41',
      '43',
      '46',
      '52',
      '53',
    ];
    expect(DELAY_REASONS.map((d) => d.code)).toEqual(specCodes);
    expect(findDelayReason('12')?.meaning).toBe('Receiver does not answer phone');
    expect(findDelayReason('53')?.meaning).toBe('Sender asks for destruction');
    expect(findDelayReason('17')).toBeUndefined();
  });

  it('knows the documented tracking error codes and the one seen later', () => {
    for (const code of [
      'MISSING_APIKEY',
      'ORDERCODE_NOT_FOUND',
      'APIKEY_LIMIT',
      'ORDERCODE_FORMAT_EXCEPTION',
      'ORDERCODE_QUERY_EXPIRED',
    ]) {
      expect(findTrackingErrorCode(code)?.code).toBe(code);
    }
  });
});

describe('checkOrderCode', () => {
  it.each([
    ['ABCD', TRACKING_ERROR.ORDERCODE_MIN_LENGTH],
    ['', TRACKING_ERROR.ORDERCODE_MIN_LENGTH],
    ['ABCDE', undefined],
    ['A'.repeat(20), undefined],
    ['A'.repeat(21), TRACKING_ERROR.ORDERCODE_MAX_LENGTH],
    ['AB CD1', TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION],
    ['ABC$12', TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION],
    ['ABCDE\n', TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION],
    ['AB_12-cd', undefined],
    ['247EXP0001234', undefined],
  ])('%j gives %s', (code, expected) => {
    expect(checkOrderCode(code)).toBe(expected);
  });
});
