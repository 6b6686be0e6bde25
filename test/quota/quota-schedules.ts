/** What the quota property tests share: a store, a restartable view of it, random policies, and what was sent. */
import { fc } from '@fast-check/vitest';
import { expect } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import type { QuotaUsageStore } from '../../src/quota/quota-ledger.js';
import { type QuotaPolicy, QuotaPolicySchema, TOTAL_ALIAS } from '../../src/quota/quota-policy.js';
import { warehouseQuotaStore } from '../../src/quota/warehouse-quota-store.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';

export const ALIASES = ['shop-a', 'shop-b', 'shop-c'] as const;

/** 23:00 of a carrier day: a few steps of the clock cross into the next one. */
export const START_MS = Date.parse('2026-11-11T16:00:00Z');

/** Clock steps: within the carrier day, and across one or more midnights. */
export const clockStepMinutes = fc.constantFrom(5, 45, 90, 24 * 60, 3 * 24 * 60);

export const policies: fc.Arbitrary<QuotaPolicy> = fc
  .record({
    perKeyDaily: fc.integer({ min: 0, max: 12 }),
    globalDaily: fc.integer({ min: 0, max: 24 }),
    reservePerKey: fc.integer({ min: 0, max: 2 }),
    reserveGlobal: fc.integer({ min: 0, max: 3 }),
    maxConcurrent: fc.integer({ min: 1, max: 8 }),
  })
  .map((policy) => QuotaPolicySchema.parse(policy));

/** Waits `hops` turns of the event loop: a store write that takes a while, so writes and lookups interleave. */
export async function turns(hops: number): Promise<void> {
  for (let i = 0; i < hops; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A quota store in memory with the warehouse store's rules (src/pipeline/warehouse-quota-store.ts):
 * the only writer, it grants every reservation and lets the ledger check the limits; a release sets
 * the key's count; an APIKEY_LIMIT answer is kept apart from the counts. Each write takes the next of `writeTurns` turns of the event loop.
 */
export function memoryQuotaStore(writeTurns: readonly number[]): QuotaUsageStore {
  const days = new Map<string, Map<string, number>>();
  const limitReports = new Map<string, Set<string>>();
  let writes = 0;
  const countsOf = (day: string) => days.get(day) ?? days.set(day, new Map()).get(day)!;
  const add = (day: string, alias: string, delta: number) => {
    const counts = countsOf(day);
    counts.set(alias, (counts.get(alias) ?? 0) + delta);
    counts.set(TOTAL_ALIAS, (counts.get(TOTAL_ALIAS) ?? 0) + delta);
  };
  const written = () => turns(writeTurns.length === 0 ? 0 : writeTurns[writes++ % writeTurns.length]!);
  return {
    read: async (day) => new Map(countsOf(day)),
    reserve: async (day, alias, lookups) => {
      await written();
      add(day, alias, lookups);
      return { granted: lookups };
    },
    reportLimit: async (day, alias) => {
      await written();
      (limitReports.get(day) ?? limitReports.set(day, new Set()).get(day)!).add(alias);
    },
    readLimitReports: async (day) => new Set(limitReports.get(day)),
    release: async (day, alias, _lookups, countAfter) => {
      await written();
      add(day, alias, countAfter - (countsOf(day).get(alias) ?? 0));
    },
  };
}

/**
 * A store as the processes of successive runs see it. `crash()` ends the current process: writes it
 * has not handed to the store yet never happen (what a killed process leaves), those already handed
 * over finish first; the next ledger opened on `store` is the next process's.
 */
export class RestartableStore {
  private process = 0;
  private readonly handedOver = new Set<Promise<unknown>>();
  readonly store: QuotaUsageStore;

  constructor(private readonly inner: QuotaUsageStore) {
    const ofThisProcess =
      <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
      (...args: A): Promise<R> => {
        const process = this.process;
        // The write starts on the next turn: a crash in between loses it.
        return Promise.resolve().then(() => {
          if (process !== this.process) return new Promise<R>(() => undefined);
          const pending = write(...args);
          this.handedOver.add(pending);
          void pending.finally(() => this.handedOver.delete(pending)).catch(() => undefined);
          return pending;
        });
      };
    this.store = {
      read: (day) => inner.read(day),
      reserve: ofThisProcess(inner.reserve.bind(inner)),
      reportLimit: ofThisProcess(inner.reportLimit.bind(inner)),
      readLimitReports: (day) => inner.readLimitReports(day),
      release: ofThisProcess(inner.release.bind(inner)),
    };
  }

  async crash(): Promise<void> {
    this.process++;
    await Promise.allSettled([...this.handedOver]);
  }

  /** The counts of a day as stored, for the test's checks. */
  counts(day: string): Promise<Map<string, number>> {
    return this.inner.read(day);
  }
}

/** Lookups sent (let through by the ledger), per carrier day and key alias. */
export class SentLookups {
  private readonly days = new Map<string, Map<string, number>>();

  add(day: string, alias: string, lookups: number): void {
    const counts = this.days.get(day) ?? this.days.set(day, new Map()).get(day)!;
    counts.set(alias, (counts.get(alias) ?? 0) + lookups);
  }

  of(day: string, alias: string): number {
    return this.days.get(day)?.get(alias) ?? 0;
  }

  totalOf(day: string): number {
    let total = 0;
    for (const n of this.days.get(day)?.values() ?? []) total += n;
    return total;
  }

  get carrierDays(): string[] {
    return [...this.days.keys()];
  }

  /** Within each key's quota and the global one, reserves left untouched. */
  expectWithinQuota(policy: QuotaPolicy): void {
    const perKey = Math.max(0, policy.perKeyDaily - policy.reservePerKey);
    const total = Math.max(0, policy.globalDaily - policy.reserveGlobal);
    for (const day of this.carrierDays) {
      for (const alias of ALIASES) expect(this.of(day, alias)).toBeLessThanOrEqual(perKey);
      expect(this.totalOf(day)).toBeLessThanOrEqual(total);
    }
  }

  /** The store counts, for each key and in total, at least every lookup sent. */
  async expectCounted(store: RestartableStore): Promise<void> {
    for (const day of this.carrierDays) {
      const counts = await store.counts(day);
      for (const alias of ALIASES) expect(counts.get(alias) ?? 0).toBeGreaterThanOrEqual(this.of(day, alias));
      expect(counts.get(TOTAL_ALIAS) ?? 0).toBeGreaterThanOrEqual(this.totalOf(day));
    }
  }
}

export function carrierDayAt(epochMs: number, policy: QuotaPolicy): string {
  return carrierDayOf(epochMs, policy.dayUtcOffsetMinutes);
}

/**
 * Plays random schedules over the warehouse's quota store on its own connection, as a run opens it,
 * from an empty `quota_usage` each time.
 */
export async function playOnWarehouseStore<S>(
  warehouse: Warehouse,
  schedules: fc.Arbitrary<S>,
  play: (schedule: S, store: QuotaUsageStore) => Promise<void>,
  parameters: fc.Parameters<[S]>,
): Promise<void> {
  const connection = await warehouse.openSession();
  await fc.assert(
    fc.asyncProperty(schedules, async (schedule) => {
      await warehouse.run('DELETE FROM quota_usage');
      await play(schedule, warehouseQuotaStore(connection, DEFAULT_CARRIER_ID));
    }),
    parameters,
  );
}
