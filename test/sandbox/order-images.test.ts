/**
 * The sandbox's order images: a delivered order lists its proof-of-delivery images, whose links
 * download as JPEG files; an order without images lists none; another account's order is refused.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ImagesResult,
  ImagesResultSchema,
  OPERATION_PATHS,
  STATUS,
} from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { DAY_MS, httpPost, keysOf, postControl, startTestSandbox, truthOrders } from './sandbox-http.js';

const IMAGE_BYTES = 600;

let sandbox: RunningSandbox;
let keys: Record<string, string>;
let orders: OrderTruth[];

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 9, imageBytes: IMAGE_BYTES });
  keys = keysOf(sandbox);
  orders = await truthOrders(sandbox);
});

afterAll(async () => {
  await sandbox.stop();
});

async function listImages(
  apiKey: string | undefined,
  orderCode: string,
): Promise<{ status: number; result: ImagesResult }> {
  const headers: Record<string, string> = apiKey === undefined ? {} : { ApiKey: apiKey };
  const answer = await httpPost(
    `${sandbox.url}${OPERATION_PATHS.images}`,
    JSON.stringify({ OrderCode: orderCode }),
    headers,
  );
  return { status: answer.status, result: ImagesResultSchema.parse(JSON.parse(answer.text)) };
}

async function download(url: string): Promise<{ status: number; contentType: string; bytes: Buffer }> {
  const answer = await request(url);
  return {
    status: answer.statusCode,
    contentType: String(answer.headers['content-type']),
    bytes: Buffer.from(await answer.body.arrayBuffer()),
  };
}

function ordersWhere(test: (o: OrderTruth) => boolean, count: number): OrderTruth[] {
  const found = orders.filter(test).slice(0, count);
  expect(found.length).toBeGreaterThan(0);
  return found;
}

describe('order images', () => {
  it('lists imageCount images of a delivered order, each link downloading as a JPEG', async () => {
    for (const order of ordersWhere((o) => o.status === STATUS.DELIVERED && o.imageCount > 0, 4)) {
      const { status, result } = await listImages(keys[order.account], order.orderCode);
      expect(status).toBe(200);
      expect(result.Errors).toEqual([]);
      expect(result.ErrorMessage).toBe('');
      expect(result.Items.map((i) => i.No)).toEqual(Array.from({ length: order.imageCount }, (_, i) => i + 1));
      expect(new Set(result.Items.map((i) => i.ImageURL)).size).toBe(order.imageCount);
      for (const item of result.Items) {
        expect(item.OrderCode).toBe(order.orderCode);
        const file = await download(item.ImageURL);
        expect(file.status).toBe(200);
        expect(file.contentType).toBe('image/jpeg');
        expect(file.bytes.length).toBe(IMAGE_BYTES);
        // JPEG start-of-image and end-of-image markers.
        expect([file.bytes[0], file.bytes[1]]).toEqual([0xff, 0xd8]);
        expect([file.bytes[IMAGE_BYTES - 2], file.bytes[IMAGE_BYTES - 1]]).toEqual([0xff, 0xd9]);
        // The same link gives the same file.
        expect((await download(item.ImageURL)).bytes.equals(file.bytes)).toBe(true);
      }
    }
  });

  it('gives no link past the last image', async () => {
    const [order] = ordersWhere((o) => o.status === STATUS.DELIVERED && o.imageCount > 0, 1);
    const { result } = await listImages(keys[order!.account], order!.orderCode);
    const past = result.Items[result.Items.length - 1]!.ImageURL.replace(
      /\/(\d+)\.jpg$/,
      (_, n: string) => `/${Number(n) + 1}.jpg`,
    );
    expect((await download(past)).status).toBe(404);
  });

  it('answers Items [] and Errors [] for a delivered order without images and for an undelivered one', async () => {
    const none = ordersWhere((o) => o.status === STATUS.DELIVERED && o.imageCount === 0, 2);
    const undelivered = ordersWhere((o) => o.status !== STATUS.DELIVERED, 2);
    for (const order of [...none, ...undelivered]) {
      const { status, result } = await listImages(keys[order.account], order.orderCode);
      expect(status).toBe(200);
      expect(result).toEqual({ Items: [], Errors: [], ErrorMessage: '' });
    }
  });

  it('lists the images of an order once it is delivered', async () => {
    const pending = orders.filter((o) => o.status !== STATUS.DELIVERED && o.imageCount > 0);
    expect(pending.length).toBeGreaterThan(0);
    for (const order of pending)
      expect((await listImages(keys[order.account], order.orderCode)).result.Items).toEqual([]);
    await postControl(sandbox, '/_sandbox/clock', { advanceMs: 3 * DAY_MS });
    const now = new Map((await truthOrders(sandbox)).map((o) => [o.orderCode, o]));
    const delivered = pending.filter((o) => now.get(o.orderCode)!.status === STATUS.DELIVERED);
    expect(delivered.length).toBeGreaterThan(0);
    for (const order of delivered)
      expect((await listImages(keys[order.account], order.orderCode)).result.Items.length).toBe(order.imageCount);
  });

  it("refuses another account's order and an unknown one, with an error message", async () => {
    const [first, second] = sandbox.state.world.accounts;
    const [foreign] = ordersWhere(
      (o) => o.account === second!.alias && o.status === STATUS.DELIVERED && o.imageCount > 0,
      1,
    );
    for (const code of [foreign!.orderCode, 'EX999999999']) {
      const { result } = await listImages(first!.apiKey, code);
      expect(result.Items).toEqual([]);
      expect(result.Errors.length).toBeGreaterThan(0);
      expect(result.ErrorMessage).toBeTruthy();
    }
  });

  it('answers 401 without the ApiKey header', async () => {
    const [order] = ordersWhere((o) => o.status === STATUS.DELIVERED, 1);
    const { status, result } = await listImages(undefined, order!.orderCode);
    expect(status).toBe(401);
    expect(result.ErrorMessage).toBeTruthy();
  });
});
