/**
 * The sandbox's daily lookup limits: per key and global, counted exactly, reported by
 * /_sandbox/usage, and reset at the carrier's midnight (UTC+07:00 unless configured).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKING_ERROR } from '../../src/carriers/247express/contract.js';
import type { DayUsage } from '../../src/sandbox/lookup-quota.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import {
  epochOf,
  getJson,
  keysOf,
  postControl,
  startTestSandbox,
  track,
  trackError,
  trackSnapshot,
} from './sandbox-http.js';

/** 22:00 at UTC+07:00: two hours before the carrier's midnight, seven before UTC's. */
const START = '2026-11-20T22:00:00+07:00';
const FIRST_DAY = '2026-11-20';
const NEXT_DAY = '2026-11-21';
const CARRIER_MIDNIGHT = epochOf('2026-11-21T00:00:00+07:00');
const UTC_MIDNIGHT = epochOf('2026-11-21T00:00:00Z');

async function usage(sandbox: RunningSandbox): Promise<Record<string, DayUsage>> {
  return getJson<Record<string, DayUsage>>(`${sandbox.url}/_sandbox/usage`);
}

/** The first order code of each account, by alias. */
function firstOrders(sandbox: RunningSandbox): Record<string, string> {
  const world = sandbox.state.world;
  return Object.fromEntries(world.accounts.map((a) => [a.alias, world.orderCode(a.index, 0)]));
}

async function moveClockTo(sandbox: RunningSandbox, epochMs: number): Promise<void> {
  await postControl(sandbox, '/_sandbox/clock', { advanceMs: epochMs - sandbox.state.clock.now() });
  expect(sandbox.state.clock.now()).toBe(epochMs);
}

async function expectLimit(sandbox: RunningSandbox, key: string, code: string): Promise<string> {
  const { error } = await trackError(sandbox, key, code);
  expect(error.errorCode).toBe(TRACKING_ERROR.APIKEY_LIMIT);
  expect(error.orderCode).toBe(code);
  return error.errorMessage ?? '';
}

describe('per-key daily limit', () => {
  const PER_KEY = 5;
  let sandbox: RunningSandbox;
  let keys: Record<string, string>;
  let codes: Record<string, string>;
  let aliases: string[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      seed: 3,
      ordersPerAccount: 10,
      start: START,
      limits: { perKeyDaily: PER_KEY, globalDaily: 1_000 },
    });
    keys = keysOf(sandbox);
    codes = firstOrders(sandbox);
    aliases = Object.keys(keys);
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  it('answers exactly perKeyDaily lookups of a key, then refuses with APIKEY_LIMIT', async () => {
    const [a] = aliases as [string];
    for (let i = 0; i < PER_KEY; i++)
      expect((await trackSnapshot(sandbox, keys[a]!, codes[a]!)).orderCode).toBe(codes[a]);
    const message = await expectLimit(sandbox, keys[a]!, codes[a]!);
    expect(message).toContain(PER_KEY.toLocaleString('en-US'));
    await expectLimit(sandbox, keys[a]!, codes[a]!);
    expect((await usage(sandbox))[FIRST_DAY]).toEqual({
      lookups: PER_KEY,
      refused: 2,
      perKey: { [a]: { lookups: PER_KEY, refused: 2 } },
    });
  });

  it('leaves the other keys unaffected, and counts them apart', async () => {
    const [a, b, c] = aliases as [string, string, string];
    expect((await trackSnapshot(sandbox, keys[b]!, codes[b]!)).orderCode).toBe(codes[b]);
    // Every request naming a known key counts, whatever its answer: here a too-short code.
    expect((await trackError(sandbox, keys[c]!, 'AB')).error.errorCode).toBe(TRACKING_ERROR.ORDERCODE_MIN_LENGTH);
    // An unknown key is counted nowhere.
    expect((await trackError(sandbox, 'not-a-key', codes[a]!)).error.errorCode).toBe(TRACKING_ERROR.APIKEY_NOT_FOUND);
    const day = (await usage(sandbox))[FIRST_DAY]!;
    expect(day.perKey).toEqual({
      [a]: { lookups: PER_KEY, refused: 2 },
      [b]: { lookups: 1, refused: 0 },
      [c]: { lookups: 1, refused: 0 },
    });
    expect(day.lookups).toBe(PER_KEY + 2);
    expect(day.refused).toBe(2);
  });

  it('takes a raised limit at once through /_sandbox/limits, keeping the limits the patch does not name', async () => {
    const [a] = aliases as [string];
    const limits = await postControl(sandbox, '/_sandbox/limits', { perKeyDaily: PER_KEY + 1 });
    expect(limits).toEqual({ perKeyDaily: PER_KEY + 1, globalDaily: 1_000, dayUtcOffsetMinutes: 7 * 60 });
    try {
      expect((await track(sandbox, keys[a]!, codes[a]!)).result.kind).toBe('snapshot');
      await expectLimit(sandbox, keys[a]!, codes[a]!);
    } finally {
      await postControl(sandbox, '/_sandbox/limits', { perKeyDaily: PER_KEY });
    }
    expect((await usage(sandbox))[FIRST_DAY]!.perKey[a]).toEqual({ lookups: PER_KEY + 1, refused: 3 });
  });

  it('still refuses at 23:59:59.999 carrier time, and counts afresh from the carrier midnight', async () => {
    const [a, b] = aliases as [string, string];
    await moveClockTo(sandbox, CARRIER_MIDNIGHT - 1);
    await expectLimit(sandbox, keys[a]!, codes[a]!);
    await moveClockTo(sandbox, CARRIER_MIDNIGHT);
    for (let i = 0; i < PER_KEY; i++) expect((await track(sandbox, keys[a]!, codes[a]!)).result.kind).toBe('snapshot');
    await expectLimit(sandbox, keys[a]!, codes[a]!);
    expect((await track(sandbox, keys[b]!, codes[b]!)).result.kind).toBe('snapshot');
    const days = await usage(sandbox);
    expect(days[NEXT_DAY]).toEqual({
      lookups: PER_KEY + 1,
      refused: 1,
      perKey: { [a]: { lookups: PER_KEY, refused: 1 }, [b]: { lookups: 1, refused: 0 } },
    });
    // The finished day's record stays as it was.
    expect(days[FIRST_DAY]!.perKey[a]).toEqual({ lookups: PER_KEY + 1, refused: 4 });
  });
});

describe('global daily limit', () => {
  const GLOBAL = 4;
  let sandbox: RunningSandbox;
  let keys: Record<string, string>;
  let codes: Record<string, string>;

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      seed: 3,
      ordersPerAccount: 10,
      start: START,
      limits: { perKeyDaily: 100, globalDaily: GLOBAL },
    });
    keys = keysOf(sandbox);
    codes = firstOrders(sandbox);
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  it('answers exactly globalDaily lookups over all keys, then refuses every key with APIKEY_LIMIT', async () => {
    const [a, b, c] = Object.keys(keys) as [string, string, string];
    for (const alias of [a, b, a, c])
      expect((await track(sandbox, keys[alias]!, codes[alias]!)).result.kind).toBe('snapshot');
    for (const alias of [b, c, a]) await expectLimit(sandbox, keys[alias]!, codes[alias]!);
    const day = (await usage(sandbox))[FIRST_DAY]!;
    expect(day.lookups).toBe(GLOBAL);
    expect(day.refused).toBe(3);
    expect(day.perKey).toEqual({
      [a]: { lookups: 2, refused: 1 },
      [b]: { lookups: 1, refused: 1 },
      [c]: { lookups: 1, refused: 1 },
    });
  });

  it('counts afresh from the carrier midnight', async () => {
    const [a] = Object.keys(keys) as [string];
    await moveClockTo(sandbox, CARRIER_MIDNIGHT);
    for (let i = 0; i < GLOBAL; i++) expect((await track(sandbox, keys[a]!, codes[a]!)).result.kind).toBe('snapshot');
    await expectLimit(sandbox, keys[a]!, codes[a]!);
    expect((await usage(sandbox))[NEXT_DAY]).toEqual({
      lookups: GLOBAL,
      refused: 1,
      perKey: { [a]: { lookups: GLOBAL, refused: 1 } },
    });
  });
});

describe('quota day boundary', () => {
  it('follows dayUtcOffsetMinutes: with 0, the day turns at UTC midnight, not the carrier one', async () => {
    const sandbox = await startTestSandbox({
      seed: 3,
      ordersPerAccount: 10,
      start: START,
      limits: { perKeyDaily: 1, dayUtcOffsetMinutes: 0 },
    });
    try {
      const [account] = sandbox.state.world.accounts;
      const key = account!.apiKey;
      const code = sandbox.state.world.orderCode(0, 0);
      expect((await track(sandbox, key, code)).result.kind).toBe('snapshot');
      await moveClockTo(sandbox, CARRIER_MIDNIGHT);
      await expectLimit(sandbox, key, code);
      await moveClockTo(sandbox, UTC_MIDNIGHT);
      expect((await track(sandbox, key, code)).result.kind).toBe('snapshot');
      expect(Object.keys(await usage(sandbox)).sort()).toEqual(['2026-11-20', '2026-11-21']);
    } finally {
      await sandbox.stop();
    }
  });
});
