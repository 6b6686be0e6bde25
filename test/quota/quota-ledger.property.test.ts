import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { QuotaLedger, type QuotaUsageStore } from '../../src/quota/quota-ledger.js';
import type { QuotaPolicy } from '../../src/quota/quota-policy.js';
import { useTempDirs } from '../warehouse/warehouse-fixtures.js';
import {
  ALIASES,
  carrierDayAt,
  clockStepMinutes,
  memoryQuotaStore,
  playOnWarehouseStore,
  policies,
  RestartableStore,
  SentLookups,
  START_MS,
} from './quota-schedules.js';

const temp = useTempDirs();

/** What a run does to its ledger at once: lookups of a key, an APIKEY_LIMIT answer, the end of the run. */
type LedgerCall =
  | { readonly kind: 'spend'; readonly alias: number; readonly count: number }
  | { readonly kind: 'exhaust'; readonly alias: number }
  | { readonly kind: 'settle' };

type Step =
  | { readonly kind: 'calls'; readonly calls: readonly LedgerCall[] }
  | { readonly kind: 'clock'; readonly minutes: number }
  /** A new process opens a ledger on the same store; the old one settled first, or was killed. */
  | { readonly kind: 'restart'; readonly crash: boolean };

const aliasIndex = fc.integer({ min: 0, max: ALIASES.length - 1 });
const ledgerCall: fc.Arbitrary<LedgerCall> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant('spend'), alias: aliasIndex, count: fc.integer({ min: 1, max: 5 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('exhaust'), alias: aliasIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('settle') }) },
) as fc.Arbitrary<LedgerCall>;
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('calls'), calls: fc.array(ledgerCall, { minLength: 1, maxLength: 8 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('clock'), minutes: clockStepMinutes }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart'), crash: fc.boolean() }) },
) as fc.Arbitrary<Step>;

interface Schedule {
  readonly policy: QuotaPolicy;
  readonly aliases: number;
  readonly reservationChunk: number;
  readonly steps: readonly Step[];
}

const schedules = (maxSteps: number): fc.Arbitrary<Schedule> =>
  fc.record({
    policy: policies,
    aliases: fc.integer({ min: 1, max: ALIASES.length }),
    // 0 is the shared store's: reserve exactly what is spent.
    reservationChunk: fc.integer({ min: 0, max: 6 }),
    steps: fc.array(step, { maxLength: maxSteps }),
  });

/**
 * Plays the schedule against ledgers on `store`, one after another as runs and restarts come, and
 * checks after every call that what was sent stays within the quotas and that the store counts it.
 */
async function play(schedule: Schedule, inner: QuotaUsageStore): Promise<void> {
  const { policy } = schedule;
  const aliases = ALIASES.slice(0, schedule.aliases);
  const store = new RestartableStore(inner);
  const sent = new SentLookups();
  let now = START_MS;
  let crashed = false;
  /** Keys the carrier answered APIKEY_LIMIT for, per carrier day: nothing more may go out for them. */
  const refused = new Set<string>();
  const openLedger = async () => {
    const ledger = new QuotaLedger(store.store, policy, aliases, () => now, schedule.reservationChunk);
    await ledger.open();
    return ledger;
  };
  let ledger = await openLedger();

  for (const s of schedule.steps) {
    if (s.kind === 'clock') {
      now += s.minutes * 60_000;
    } else if (s.kind === 'restart') {
      if (s.crash) {
        await store.crash();
        crashed = true;
      } else {
        await ledger.settle();
      }
      ledger = await openLedger();
    } else {
      const day = carrierDayAt(now, policy);
      const current = ledger;
      await Promise.all(
        s.calls.map((call) => {
          if (call.kind === 'settle') return current.settle();
          const alias = aliases[call.alias % aliases.length]!;
          if (call.kind === 'exhaust') {
            // Taken for the ledger's carrier day when the write runs: the day before, if no call has shown it midnight yet.
            if (current.carrierDay === day) refused.add(`${day} ${alias}`);
            return current.exhaust(alias);
          }
          const exhaustedBefore = refused.has(`${day} ${alias}`);
          return current.spendMany(alias, call.count).then(async (granted) => {
            expect(granted).toBeGreaterThanOrEqual(0);
            expect(granted).toBeLessThanOrEqual(call.count);
            // Once the carrier said APIKEY_LIMIT, nothing more goes out for the key that day.
            if (exhaustedBefore) expect(granted).toBe(0);
            // Fewer than asked only when the day's allowance for the key is gone, as the ledger sees it
            // then: spent, or reserved ahead by other keys (given back when their run ends).
            if (granted < call.count) expect(current.remaining(alias)).toBe(0);
            sent.add(day, alias, granted);
            sent.expectWithinQuota(policy);
            await sent.expectCounted(store);
          });
        }),
      );
    }
    await sent.expectCounted(store);
  }

  if (crashed) return;
  // Every run settled: the store counts exactly what was sent, APIKEY_LIMIT answers or not.
  await ledger.settle();
  for (const day of sent.carrierDays) {
    const counts = await store.counts(day);
    for (const alias of aliases) expect(counts.get(alias) ?? 0).toBe(sent.of(day, alias));
  }
}

describe('QuotaLedger, over random schedules of lookups, APIKEY_LIMIT answers, carrier days and restarts', () => {
  test.prop([schedules(20), fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 5 })], { numRuns: 150 })(
    'never lets more through than the key and global quotas, and never counts fewer than it let through',
    (schedule, writeTurns) => play(schedule, memoryQuotaStore(writeTurns)),
  );

  it('keeps both rules over the warehouse quota store on a DuckDB file', async () => {
    const { warehouse } = await temp.open();
    await playOnWarehouseStore(warehouse, schedules(10), play, { numRuns: 10 });
  });
});
