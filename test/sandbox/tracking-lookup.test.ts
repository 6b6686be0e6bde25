/**
 * The sandbox's tracking lookup over HTTP: every documented error code under its documented condition,
 * in the documented result shape, and every snapshot passing the contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOrderStatus, TRACKING_ERROR } from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import {
  DAY_MS,
  epochOf,
  keysOf,
  mapConcurrent,
  postControl,
  startTestSandbox,
  track,
  trackError,
  trackRaw,
  trackSnapshot,
  truthOrders,
} from './sandbox-http.js';

/** The fields a tracking answer carries besides the error and the order code (docs/carriers/247express.md, Tracking result). */
const DATA_FIELDS = [
  'externalCode',
  'acceptDate',
  'status',
  'statusName',
  'trackingName',
  'delayCode',
  'delayNote',
  'deliveryNotes',
  'deliveryDate',
  'poDeliveryID',
  'mailMan',
  'receiverName',
  'serviceTypeID',
  'mailerTypeID',
  'extraServiceName',
  'length',
  'width',
  'height',
  'realWeight',
  'calWeight',
  'weight',
  'quantity',
  'price',
  'priceFR',
  'farRegionFeeAmount',
  'fuelFeeAmount',
  'vatAmount',
  'totalServiceCost',
  'edtFrom',
  'edtTo',
  'senderID',
  'senderName',
  'postOfficeAcceptID',
  'codAmount',
  'priceInfo',
  'statuses',
  'trackings',
  'estimateRoutes',
  'confirmImage',
];

let sandbox: RunningSandbox;
let keys: Record<string, string>;
let orders: OrderTruth[];

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 11, ordersPerAccount: 40 });
  keys = keysOf(sandbox);
  orders = await truthOrders(sandbox);
});

afterAll(async () => {
  await sandbox.stop();
});

function existingOrder(account: string): OrderTruth {
  const order = orders.find((o) => o.account === account && o.status !== null);
  if (!order) throw new Error(`no order of ${account}`);
  return order;
}

function firstAccount(): string {
  return sandbox.state.world.accounts[0]!.alias;
}

/**
 * The documented error shape: the same object as a snapshot, with errorCode and errorMessage filled,
 * the order code echoed, and no order data.
 */
async function expectError(
  apiKey: string | undefined,
  orderCode: string | undefined,
  expectedCode: string,
  keyParam = 'apiKey',
): Promise<{ wire: Record<string, unknown>; errorMessage: string }> {
  const { wire, error } = await trackError(sandbox, apiKey, orderCode, keyParam);
  expect(error.errorCode).toBe(expectedCode);
  expect(typeof error.errorMessage).toBe('string');
  expect(error.errorMessage!.length).toBeGreaterThan(0);
  expect(wire.orderCode).toBe(orderCode ?? null);
  expect(Object.keys(wire).sort()).toEqual(['errorCode', 'errorMessage', 'orderCode', ...DATA_FIELDS].sort());
  for (const field of DATA_FIELDS) expect(wire[field], `${expectedCode}: ${field}`).toBeNull();
  return { wire, errorMessage: error.errorMessage! };
}

describe('tracking lookup errors', () => {
  it('MISSING_APIKEY when the key is absent or empty', async () => {
    const code = existingOrder(firstAccount()).orderCode;
    await expectError(undefined, code, TRACKING_ERROR.MISSING_APIKEY);
    await expectError('', code, TRACKING_ERROR.MISSING_APIKEY);
    await expectError(undefined, undefined, TRACKING_ERROR.MISSING_APIKEY);
  });

  it('MISSING_ORDERCODE when the order code is absent or empty', async () => {
    const key = keys[firstAccount()]!;
    await expectError(key, undefined, TRACKING_ERROR.MISSING_ORDERCODE);
    await expectError(key, '', TRACKING_ERROR.MISSING_ORDERCODE);
  });

  it('ORDERCODE_MIN_LENGTH below 5 characters, and not at 5', async () => {
    const key = keys[firstAccount()]!;
    await expectError(key, 'EX12', TRACKING_ERROR.ORDERCODE_MIN_LENGTH);
    await expectError(key, 'A', TRACKING_ERROR.ORDERCODE_MIN_LENGTH);
    await expectError(key, 'EX123', TRACKING_ERROR.ORDERCODE_NOT_FOUND);
  });

  it('ORDERCODE_MAX_LENGTH above 20 characters, and not at 20', async () => {
    const key = keys[firstAccount()]!;
    await expectError(key, 'EX1'.padEnd(21, '0'), TRACKING_ERROR.ORDERCODE_MAX_LENGTH);
    await expectError(key, 'EX1'.padEnd(20, '0'), TRACKING_ERROR.ORDERCODE_NOT_FOUND);
  });

  it('ORDERCODE_FORMAT_EXCEPTION for characters other than letters, digits, _ and -', async () => {
    const key = keys[firstAccount()]!;
    for (const code of ['EX1000*0001', 'EX100 00001', 'EX1.0000001', 'EX1/0000001', 'ĐƠN1000001']) {
      await expectError(key, code, TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION);
    }
    // Underscore and hyphen are allowed: a well-formed unknown code.
    await expectError(key, 'EX_1-000001', TRACKING_ERROR.ORDERCODE_NOT_FOUND);
  });

  it('ORDERCODE_NOT_FOUND for a well-formed code no order has', async () => {
    const key = keys[firstAccount()]!;
    const world = sandbox.state.world;
    // One past the last order of the account, and an account number the world does not have.
    await expectError(key, world.orderCode(0, world.options.ordersPerAccount), TRACKING_ERROR.ORDERCODE_NOT_FOUND);
    await expectError(key, world.orderCode(8, 0), TRACKING_ERROR.ORDERCODE_NOT_FOUND);
    await expectError(key, 'ZZ100000001', TRACKING_ERROR.ORDERCODE_NOT_FOUND);
  });

  it("ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT for another account's order", async () => {
    const [first, second] = sandbox.state.world.accounts;
    const foreign = existingOrder(second!.alias).orderCode;
    await expectError(keys[first!.alias], foreign, TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT);
    // The owner's key reads it.
    expect((await trackSnapshot(sandbox, keys[second!.alias]!, foreign)).orderCode).toBe(foreign);
  });

  it('APIKEY_NOT_FOUND for a key the carrier never issued', async () => {
    const code = existingOrder(firstAccount()).orderCode;
    const realKey = keys[firstAccount()]!;
    await expectError('00000000-0000-0000-0000-000000000000', code, TRACKING_ERROR.APIKEY_NOT_FOUND);
    // A near miss of a real key is still unknown.
    await expectError(
      `${realKey.slice(0, -1)}${realKey.endsWith('0') ? '1' : '0'}`,
      code,
      TRACKING_ERROR.APIKEY_NOT_FOUND,
    );
  });

  it('EXCEPTION when injected, in the same error shape, and answers again once it is off', async () => {
    const alias = firstAccount();
    const code = existingOrder(alias).orderCode;
    await postControl(sandbox, '/_sandbox/faults', { exceptionRate: 1 });
    try {
      await expectError(keys[alias], code, TRACKING_ERROR.EXCEPTION);
    } finally {
      await postControl(sandbox, '/_sandbox/faults', { exceptionRate: 0 });
    }
    expect((await trackSnapshot(sandbox, keys[alias]!, code)).orderCode).toBe(code);
  });

  it('answers every error over HTTP 200 with a JSON body', async () => {
    const answer = await trackRaw(sandbox, { apiKey: keys[firstAccount()], ordercode: 'AB' });
    expect(answer.status).toBe(200);
    expect(String(answer.headers['content-type'])).toMatch(/^application\/json/);
  });
});

describe('tracking lookup answers', () => {
  it('accepts the key as apiKey and as apikey, with the same answer', async () => {
    const alias = firstAccount();
    const code = existingOrder(alias).orderCode;
    const camel = await trackRaw(sandbox, { apiKey: keys[alias], ordercode: code });
    const lower = await trackRaw(sandbox, { apikey: keys[alias], ordercode: code });
    expect(JSON.parse(camel.text).errorCode).toBeNull();
    expect(lower.text).toBe(camel.text);
    // An error is reported the same way whichever spelling carries the key.
    await expectError(keys[alias], 'AB', TRACKING_ERROR.ORDERCODE_MIN_LENGTH, 'apikey');
  });

  it("answers every order of the world with a snapshot the contract accepts, matching the truth's status and history", async () => {
    const existing = orders.filter((o) => o.status !== null);
    expect(existing.length).toBe(orders.length);
    const snapshots = await mapConcurrent(existing, 16, (o) => trackSnapshot(sandbox, keys[o.account]!, o.orderCode));
    snapshots.forEach((snapshot, i) => {
      const truth = existing[i]!;
      expect(snapshot.orderCode).toBe(truth.orderCode);
      expect(snapshot.errorCode ?? null).toBeNull();
      expect(snapshot.errorMessage).toBeNull();
      expect(snapshot.status).toBe(truth.status);
      expect(snapshot.statusName).toBe(findOrderStatus(truth.status!)!.name);
      expect(snapshot.serviceTypeID).toBe(truth.serviceTypeID);
      expect(snapshot.statuses.map((s) => s.status)).toEqual(truth.events.map((e) => e.status));
      expect(snapshot.statuses.map((s) => Date.parse(s.time))).toEqual(truth.events.map((e) => epochOf(e.time)));
    });
  });

  it('does not know an order before the clock reaches its creation', async () => {
    const future = await startTestSandbox({ seed: 11, ordersPerAccount: 20, historyDays: 0, futureDays: 2 });
    try {
      const pending = (await truthOrders(future)).filter((o) => o.status === null);
      expect(pending.length).toBeGreaterThan(0);
      const order = pending.reduce((a, b) => (epochOf(a.createdAt) <= epochOf(b.createdAt) ? a : b));
      const key = keysOf(future)[order.account]!;
      const before = await trackError(future, key, order.orderCode);
      expect(before.error.errorCode).toBe(TRACKING_ERROR.ORDERCODE_NOT_FOUND);
      const created = epochOf(order.createdAt);
      expect(created - future.state.clock.now()).toBeLessThanOrEqual(2 * DAY_MS);
      await postControl(future, '/_sandbox/clock', { advanceMs: created - future.state.clock.now() });
      const after = await track(future, key, order.orderCode);
      expect(after.result.kind).toBe('snapshot');
      expect(after.wire.status).toBe('21');
    } finally {
      await future.stop();
    }
  });
});
