/**
 * The sandbox is a function of its seed and start: two sandboxes with the same ones give the same
 * keys, orders and answers, whatever order the orders are asked in; another seed gives another world.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_PATHS } from '../../src/carriers/247express/contract.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import {
  DAY_MS,
  httpGet,
  httpPost,
  keysOf,
  mapConcurrent,
  postControl,
  startTestSandbox,
  trackRaw,
} from './sandbox-http.js';

const WORLD = { ordersPerAccount: 60, start: '2026-11-20T22:00:00+07:00' };

let first: RunningSandbox;
let twin: RunningSandbox;
let other: RunningSandbox;

beforeAll(async () => {
  [first, twin, other] = await Promise.all([
    startTestSandbox({ ...WORLD, seed: 42 }),
    startTestSandbox({ ...WORLD, seed: 42 }),
    startTestSandbox({ ...WORLD, seed: 43 }),
  ]);
});

afterAll(async () => {
  await Promise.all([first, twin, other].map((s) => s.stop()));
});

/** Every order code of the world with the key of its account. */
function lookups(sandbox: RunningSandbox): { key: string; code: string }[] {
  const world = sandbox.state.world;
  return world.accounts.flatMap((a) =>
    Array.from({ length: world.options.ordersPerAccount }, (_, i) => ({
      key: a.apiKey,
      code: world.orderCode(a.index, i),
    })),
  );
}

/** The raw answer text of every order's lookup, in the order given. */
async function answers(sandbox: RunningSandbox, wanted: { key: string; code: string }[]): Promise<string[]> {
  return mapConcurrent(
    wanted,
    8,
    async ({ key, code }) => (await trackRaw(sandbox, { apiKey: key, ordercode: code })).text,
  );
}

describe('determinism', () => {
  it('gives the same accounts and keys for the same seed, and other keys for another seed', async () => {
    expect(keysOf(twin)).toEqual(keysOf(first));
    const state = async (s: RunningSandbox) => (await httpGet(`${s.url}/_sandbox/state`)).text;
    expect(await state(twin)).toBe(await state(first));
    const otherKeys = Object.values(keysOf(other));
    for (const key of Object.values(keysOf(first))) expect(otherKeys).not.toContain(key);
    // Keys are distinct between the accounts of one world.
    expect(new Set(Object.values(keysOf(first))).size).toBe(first.state.world.accounts.length);
  });

  it('answers every lookup byte for byte alike, even when the orders are asked in reverse order', async () => {
    const forward = lookups(first);
    const backward = [...lookups(twin)].reverse();
    const a = await answers(first, forward);
    const b = (await answers(twin, backward)).reverse();
    expect(b).toEqual(a);
    expect(a.every((text) => JSON.parse(text).errorCode === null)).toBe(true);
    expect((await httpGet(`${twin.url}/_sandbox/truth/orders`)).text).toBe(
      (await httpGet(`${first.url}/_sandbox/truth/orders`)).text,
    );
  });

  it('quotes and lists images alike', async () => {
    const [account] = first.state.world.accounts;
    const quote = JSON.stringify({
      ToProvinceName: 'Cà Mau',
      ToDistrictName: 'Huyện Năm Căn',
      ToWardName: 'Thị trấn Năm Căn',
      Length: 30,
      Width: 20,
      Height: 10,
      RealWeight: 2.3,
      ClientHubID: account!.clientHubID,
      ServiceTypeID: 'DE',
    });
    const images = JSON.stringify({ OrderCode: first.state.world.orderCode(0, 0) });
    for (const [path, body] of [
      [OPERATION_PATHS.price, quote],
      [OPERATION_PATHS.images, images],
    ] as const) {
      const a = await httpPost(`${first.url}${path}`, body, { ApiKey: account!.apiKey });
      const b = await httpPost(`${twin.url}${path}`, body, { ApiKey: account!.apiKey });
      expect(a.status).toBe(200);
      // Image links carry each sandbox's own address.
      expect(b.text.replaceAll(twin.url, first.url)).toBe(a.text);
    }
  });

  it('gives another world for another seed', async () => {
    const mine = (await httpGet(`${first.url}/_sandbox/truth/orders`)).text.split('\n');
    const theirs = (await httpGet(`${other.url}/_sandbox/truth/orders`)).text.split('\n');
    expect(theirs.length).toBe(mine.length);
    const differing = mine.filter((line, i) => line !== theirs[i]).length;
    // Order codes are the same; nearly every order's life differs.
    expect(differing).toBeGreaterThan(0.9 * (mine.length - 1));
  });

  it('stays alike after both clocks move the same way', async () => {
    await Promise.all([first, twin].map((s) => postControl(s, '/_sandbox/clock', { advanceMs: 1.5 * DAY_MS })));
    const sample = lookups(first).filter((_, i) => i % 3 === 0);
    expect(await answers(twin, sample)).toEqual(await answers(first, sample));
  });
});
