import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaLedger } from '../../src/quota/quota-ledger.js';
import { QuotaPolicySchema } from '../../src/quota/quota-policy.js';
import { redisQuotaStore } from '../../src/quota/redis-quota-store.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

const DAY = '2026-11-11';
const NOW = Date.parse('2026-11-11T03:00:00Z');
const LIMITS = { perKey: 1_000, total: 3_000 };

describe('the shared quota ledger in Redis', () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await redis.stop();
  });

  it('keeps an APIKEY_LIMIT answer apart from the counts, and reserves nothing more for that key that day', async () => {
    const store = redisQuotaStore(redis.client, 'limit-answers');
    expect((await store.reserve(DAY, 'shop-a', 10, LIMITS)).granted).toBe(10);
    await store.reserve(DAY, 'shop-b', 4, LIMITS);
    await store.reportLimit(DAY, 'shop-a');
    await store.reportLimit(DAY, 'shop-a');

    expect(await store.readLimitReports(DAY)).toEqual(new Set(['shop-a']));
    expect(await store.readLimitReports('2026-11-12')).toEqual(new Set());
    expect(await store.reserve(DAY, 'shop-a', 5, LIMITS)).toEqual({ granted: 0, counts: { key: 10, total: 14 } });
    expect((await store.reserve(DAY, 'shop-b', 5, LIMITS)).granted).toBe(5);
    expect(await store.read(DAY)).toEqual(
      new Map([
        ['shop-a', 10],
        ['shop-b', 9],
        ['*', 19],
      ]),
    );

    // Another worker's ledger opened that day sends nothing with the key.
    const ledger = new QuotaLedger(
      store,
      QuotaPolicySchema.parse({ perKeyDaily: 1_000 }),
      ['shop-a', 'shop-b'],
      () => NOW,
      0,
    );
    await ledger.open();
    expect(ledger.remaining('shop-a')).toBe(0);
    expect(await ledger.spendMany('shop-a', 1)).toBe(0);
    expect(await ledger.spendMany('shop-b', 1)).toBe(1);
  });
});
