import { describe, expect, it } from 'vitest';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import {
  ALL_KEYS_ALIAS,
  addQuotaUsage,
  readQuotaLimitReports,
  readQuotaUsage,
  reportQuotaLimit,
  setQuotaUsage,
} from '../../src/warehouse/quota-usage-store.js';
import { useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();
const DAY = '2026-11-11';

describe('quota usage store', () => {
  it('reads an empty map for a day with no lookups', async () => {
    const { warehouse } = await temp.open();
    expect(await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).toEqual(new Map());
  });

  it('adds to the key and to the total together', async () => {
    const { warehouse } = await temp.open();
    expect(await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 10)).toEqual({ key: 10, total: 10 });
    expect(await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-b', 5)).toEqual({ key: 5, total: 15 });
    expect(await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 7)).toEqual({ key: 17, total: 22 });
    expect(await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 0)).toEqual({ key: 17, total: 22 });
    expect(await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).toEqual(
      new Map([
        ['shop-a', 17],
        ['shop-b', 5],
        [ALL_KEYS_ALIAS, 22],
      ]),
    );
  });

  it('keeps days apart', async () => {
    const { warehouse } = await temp.open();
    await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 10);
    expect(await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, '2026-11-12', 'shop-a', 3)).toEqual({ key: 3, total: 3 });
    expect(await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).toEqual(
      new Map([
        ['shop-a', 10],
        [ALL_KEYS_ALIAS, 10],
      ]),
    );
  });

  it('keeps an APIKEY_LIMIT answer apart from the counts, at its first time, and per day', async () => {
    const { warehouse } = await temp.open();
    await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 10);
    await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-b', 4);
    await reportQuotaLimit(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a');
    const first = (await readQuotaLimitReports(warehouse, DEFAULT_CARRIER_ID, DAY)).get('shop-a');
    expect(first).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    await reportQuotaLimit(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a');
    await reportQuotaLimit(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-c');
    expect([...(await readQuotaLimitReports(warehouse, DEFAULT_CARRIER_ID, DAY)).keys()]).toEqual(['shop-a', 'shop-c']);
    expect((await readQuotaLimitReports(warehouse, DEFAULT_CARRIER_ID, DAY)).get('shop-a')).toBe(first);
    expect(await readQuotaLimitReports(warehouse, DEFAULT_CARRIER_ID, '2026-11-12')).toEqual(new Map());
    expect(await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).toEqual(
      new Map([
        ['shop-a', 10],
        ['shop-b', 4],
        [ALL_KEYS_ALIAS, 14],
      ]),
    );
    await expect(reportQuotaLimit(warehouse, DEFAULT_CARRIER_ID, DAY, ALL_KEYS_ALIAS)).rejects.toThrow(RangeError);
  });

  it('sets a key exactly, up or down, the total by the difference', async () => {
    const { warehouse } = await temp.open();
    await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 100);
    await addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-b', 50);
    expect(await setQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 60)).toEqual({ key: 60, total: 110 });
    expect(await setQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 75)).toEqual({ key: 75, total: 125 });
    expect(await setQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-c', 0)).toEqual({ key: 0, total: 125 });
    expect(await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).toEqual(
      new Map([
        ['shop-a', 75],
        ['shop-b', 50],
        ['shop-c', 0],
        [ALL_KEYS_ALIAS, 125],
      ]),
    );
  });

  it('keeps the total right under concurrent changes', async () => {
    const { warehouse } = await temp.open();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, `shop-${i % 5}`, 2)),
    );
    const usage = await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY);
    expect(usage.get(ALL_KEYS_ALIAS)).toBe(100);
    expect([...usage.entries()].filter(([alias]) => alias !== ALL_KEYS_ALIAS).reduce((sum, [, n]) => sum + n, 0)).toBe(
      100,
    );
  });

  it('refuses the total alias as a key and counts that are not whole and non-negative', async () => {
    const { warehouse } = await temp.open();
    await expect(addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, ALL_KEYS_ALIAS, 1)).rejects.toThrow(RangeError);
    await expect(addQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', -1)).rejects.toThrow(RangeError);
    await expect(setQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY, 'shop-a', 1.5)).rejects.toThrow(RangeError);
    expect(await readQuotaUsage(warehouse, DEFAULT_CARRIER_ID, DAY)).toEqual(new Map());
  });
});
