import { describe, expect, it } from 'vitest';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { MAX_RESERVATION_GROWTH, QuotaLedger, type QuotaUsageStore } from '../../src/quota/quota-ledger.js';
import { QuotaPolicySchema } from '../../src/quota/quota-policy.js';
import { warehouseQuotaStore } from '../../src/quota/warehouse-quota-store.js';
import { readQuotaLimitReports, readQuotaUsage } from '../../src/warehouse/quota-usage-store.js';
import { useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();
const NOW = Date.parse('2026-11-11T03:00:00Z');
const DAY = '2026-11-11';
const FIRST_CHUNK = 4;

/** The warehouse's own ledger store, each reservation taking `delayMs` longer: a slow disk. */
function slowStore(store: QuotaUsageStore, delayMs: number, requested: number[]): QuotaUsageStore {
  return {
    ...store,
    reserve: async (day, alias, lookups, limits) => {
      requested.push(lookups);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return store.reserve(day, alias, lookups, limits);
    },
  };
}

describe('quota ledger', () => {
  it('reserves further ahead when lookups outrun its writes, never past the growth bound, and never counts less than was spent', async () => {
    const { warehouse } = await temp.open();
    const requested: number[] = [];
    const store = slowStore(warehouseQuotaStore(warehouse, DEFAULT_CARRIER_ID), 20, requested);
    const ledger = new QuotaLedger(store, QuotaPolicySchema.parse({}), ['shop-a'], () => NOW, FIRST_CHUNK);
    await ledger.open();

    let spent = 0;
    for (let i = 0; i < 300; i++) {
      spent += await ledger.spendMany('shop-a', 1);
      // Written ahead: what the warehouse counts covers every lookup let through.
      if (i % 50 === 0)
        expect((await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).get('shop-a') ?? 0).toBeGreaterThanOrEqual(
          spent,
        );
    }
    expect(spent).toBe(300);
    expect(Math.max(...requested)).toBeGreaterThan(FIRST_CHUNK);
    expect(Math.max(...requested)).toBeLessThanOrEqual(FIRST_CHUNK * MAX_RESERVATION_GROWTH);
    // Growing, the run needed far fewer writes than one per half chunk.
    expect(requested.length).toBeLessThan(300 / (FIRST_CHUNK / 2) / 2);

    await ledger.settle();
    expect((await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).get('shop-a')).toBe(300);
  });

  it('lets no lookup through once the carrier said APIKEY_LIMIT, not even from what is already reserved', async () => {
    const { warehouse } = await temp.open();
    const ledger = new QuotaLedger(
      slowStore(warehouseQuotaStore(warehouse, DEFAULT_CARRIER_ID), 20, []),
      QuotaPolicySchema.parse({ perKeyDaily: 1_000 }),
      ['shop-a'],
      () => NOW,
      50,
    );
    await ledger.open();
    expect(await ledger.spendMany('shop-a', 1)).toBe(1);
    // Once the background top-up is written, 49 lookups stand reserved when the refusal comes in.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ledger.remaining('shop-a')).toBe(999);
    const exhausted = ledger.exhaust('shop-a');
    expect(await ledger.spendMany('shop-a', 1)).toBe(0);
    await exhausted;
    expect(await ledger.spendMany('shop-a', 1)).toBe(0);
    // What was sent stays counted as sent; the carrier's answer is kept beside it, and the next run of the day obeys it.
    expect((await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).get('shop-a')).toBe(1);
    expect([...(await readQuotaLimitReports(warehouse, DEFAULT_CARRIER_ID, DAY)).keys()]).toEqual(['shop-a']);
    const nextRun = new QuotaLedger(
      warehouseQuotaStore(warehouse, DEFAULT_CARRIER_ID),
      QuotaPolicySchema.parse({ perKeyDaily: 1_000 }),
      ['shop-a'],
      () => NOW,
      50,
    );
    await nextRun.open();
    expect(nextRun.remaining('shop-a')).toBe(0);
    expect(await nextRun.spendMany('shop-a', 1)).toBe(0);
  });

  it('gives back lookups counted and never sent: the next lookups take them, and what is left goes back when the run ends', async () => {
    const { warehouse } = await temp.open();
    const ledger = new QuotaLedger(
      warehouseQuotaStore(warehouse, DEFAULT_CARRIER_ID),
      QuotaPolicySchema.parse({ perKeyDaily: 10 }),
      ['shop-a'],
      () => NOW,
      FIRST_CHUNK,
    );
    await ledger.open();
    for (let i = 0; i < 10; i++) {
      expect(await ledger.spendMany('shop-a', 1)).toBe(1);
      expect(ledger.unspend('shop-a', 1, DAY)).toBe(true);
    }
    // Ten lookups that never reached the carrier left the whole day's quota.
    expect(ledger.spentThisRun()).toBe(0);
    expect(ledger.remaining('shop-a')).toBe(10);
    expect(await ledger.spendMany('shop-a', 3)).toBe(3);
    // Counted on a day the ledger has left: its reservations never covered them, they stay counted.
    expect(ledger.unspend('shop-a', 1, '2026-11-10')).toBe(false);
    expect(ledger.storedCounts().get('shop-a')).toBe(3);
    await ledger.settle();
    expect((await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).get('shop-a')).toBe(3);
  });
});
