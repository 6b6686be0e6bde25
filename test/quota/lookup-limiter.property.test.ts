import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { LookupLimiter, QUOTA_REFUSED } from '../../src/quota/lookup-limiter.js';
import { QuotaLedger, type QuotaUsageStore } from '../../src/quota/quota-ledger.js';
import { type QuotaPolicy, TOTAL_ALIAS } from '../../src/quota/quota-policy.js';
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
  turns,
} from './quota-schedules.js';

const temp = useTempDirs();

interface Lookup {
  readonly alias: number;
  /** Turns of the event loop the request takes. */
  readonly turns: number;
  /** The request fails (a transport error): it was still sent. */
  readonly fails: boolean;
}

type Step =
  /** Lookups handed to the limiter at once; optionally the carrier answers APIKEY_LIMIT once some have started. */
  | {
      readonly kind: 'lookups';
      readonly lookups: readonly Lookup[];
      readonly keyLimit: { readonly alias: number; readonly afterStarted: number } | null;
    }
  | { readonly kind: 'clock'; readonly minutes: number }
  /** A new run (a new process after a crash, or after the last one settled), with its own --max-lookups. */
  | { readonly kind: 'restart'; readonly crash: boolean; readonly budget: number };

const lookup = (alias: number, turnCount: number, fails: boolean): Lookup => ({ alias, turns: turnCount, fails });

const aliasIndex = fc.integer({ min: 0, max: ALIASES.length - 1 });
const budgets = fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 0, max: 20 }));
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('lookups'),
      lookups: fc.array(fc.record({ alias: aliasIndex, turns: fc.integer({ min: 0, max: 3 }), fails: fc.boolean() }), {
        maxLength: 24,
      }),
      keyLimit: fc.option(fc.record({ alias: aliasIndex, afterStarted: fc.integer({ min: 0, max: 10 }) }), {
        freq: 4,
      }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('clock'), minutes: clockStepMinutes }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart'), crash: fc.boolean(), budget: budgets }) },
) as fc.Arbitrary<Step>;

interface Schedule {
  readonly policy: QuotaPolicy;
  readonly rated: boolean;
  readonly aliases: number;
  readonly budget: number;
  readonly steps: readonly Step[];
}

const schedules = (maxSteps: number): fc.Arbitrary<Schedule> =>
  fc.record({
    policy: policies,
    // A requests-per-second cap high enough never to wait: its limiter is in the chain all the same.
    rated: fc.boolean(),
    aliases: fc.integer({ min: 1, max: ALIASES.length }),
    budget: budgets,
    steps: fc.array(step, { maxLength: maxSteps }),
  });

class TransportFailure extends Error {}

/**
 * Plays the schedule through limiters and ledgers on `store` as the tracking run uses them: the ledger
 * sized as a run sizes its chunk, APIKEY_LIMIT handled as `lookUpOrder` does, reservoirs refreshed at
 * the carrier's midnight as the limiter's day timer does. Every request checks, as it goes out, the
 * concurrency, the quotas, the run's budget, and that the store already counts it.
 */
async function play(schedule: Schedule, inner: QuotaUsageStore): Promise<void> {
  const policy = { ...schedule.policy, ...(schedule.rated ? { requestsPerSecond: 100_000 } : {}) };
  const aliases = ALIASES.slice(0, schedule.aliases);
  const store = new RestartableStore(inner);
  const sent = new SentLookups();
  let now = START_MS;
  const open = async (budget: number) => {
    const chunk = Math.max(1, Math.floor(policy.maxConcurrent / aliases.length));
    const ledger = new QuotaLedger(store.store, policy, aliases, () => now, chunk);
    await ledger.open();
    return { ledger, limiter: new LookupLimiter(ledger, policy, () => now, budget), budget, sent: 0 };
  };
  let run = await open(schedule.budget);

  try {
    for (const s of schedule.steps) {
      if (s.kind === 'clock') {
        const dayBefore = carrierDayAt(now, policy);
        now += s.minutes * 60_000;
        if (carrierDayAt(now, policy) !== dayBefore) await run.limiter.refreshReservoirs();
      } else if (s.kind === 'restart') {
        await run.limiter.stop();
        if (s.crash) await store.crash();
        else await run.ledger.settle();
        run = await open(s.budget);
      } else {
        await playLookups(s, run);
      }
      await sent.expectCounted(store);
    }
  } finally {
    await run.limiter.stop();
  }

  async function playLookups(
    s: Extract<Step, { kind: 'lookups' }>,
    current: { ledger: QuotaLedger; limiter: LookupLimiter; budget: number; sent: number },
  ): Promise<void> {
    const { ledger, limiter } = current;
    const day = carrierDayAt(now, policy);
    let inFlight = 0;
    let started = 0;
    /** Keys the carrier refused: after the lookups already let through with the refused one, none may start. */
    const closed = new Set<string>();
    let keyLimited: Promise<void> = Promise.resolve();
    const results = await Promise.all(
      s.lookups.map((lookup) => {
        const alias = aliases[lookup.alias % aliases.length]!;
        return limiter
          .schedule(alias, async () => {
            expect(closed.has(alias)).toBe(false);
            inFlight++;
            started++;
            current.sent++;
            sent.add(day, alias, 1);
            expect(inFlight).toBeLessThanOrEqual(policy.maxConcurrent);
            expect(current.sent).toBeLessThanOrEqual(current.budget);
            sent.expectWithinQuota(policy);
            if (s.keyLimit && started === s.keyLimit.afterStarted + 1) {
              const limited = aliases[s.keyLimit.alias % aliases.length]!;
              keyLimited = ledger.exhaust(limited).then(() => limiter.refreshReservoirs());
              // The lookups the ledger let through with this one are on their way; nothing after them.
              queueMicrotask(() => closed.add(limited));
            }
            await turns(lookup.turns);
            inFlight--;
            if (lookup.fails) throw new TransportFailure('connection reset');
            return 'answered' as const;
          })
          .catch((error: unknown) => {
            if (error instanceof TransportFailure) return 'failed' as const;
            throw error;
          })
          .then((result) => ({ alias, result }));
      }),
    );
    await keyLimited;
    await sent.expectCounted(store);
    expect(results.filter(({ result }) => result !== QUOTA_REFUSED)).toHaveLength(started);
    // An APIKEY_LIMIT answer refuses lookups that others were refused for, as if they would spend.
    if (s.keyLimit) return;
    // Refused only when the key's allowance or the run's budget is gone, or the day's is all counted:
    // spent, or reserved ahead by other keys (at most a chunk each, given back when their run ends).
    const counted = (await store.counts(day)).get(TOTAL_ALIAS) ?? 0;
    const dayFullyCounted = counted >= policy.globalDaily - policy.reserveGlobal;
    for (const { alias, result } of results)
      if (result === QUOTA_REFUSED) expect(limiter.isSpent(alias) || dayFullyCounted).toBe(true);
  }
}

describe('LookupLimiter, over random lookups of several keys, APIKEY_LIMIT answers, carrier days and restarts', () => {
  test.prop([schedules(12), fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 5 })], {
    numRuns: 60,
    timeout: 1_000,
  })(
    'sends within the concurrency, the key and global quotas and the run budget, each lookup counted before it goes',
    (schedule, writeTurns) => play(schedule, memoryQuotaStore(writeTurns)),
  );

  it('keeps those rules over the warehouse quota store on a DuckDB file', async () => {
    const { warehouse } = await temp.open();
    await playOnWarehouseStore(warehouse, schedules(6), play, { numRuns: 8, timeout: 5_000 });
  });

  it('lets no lookup of a key start once its APIKEY_LIMIT answer came, while the store still writes a reservation', async () => {
    // A schedule that found it: a lookup granted by a reservation the store wrote after the answer.
    const found: Schedule = {
      policy: {
        perKeyDaily: 8,
        globalDaily: 18,
        reservePerKey: 2,
        reserveGlobal: 1,
        dayUtcOffsetMinutes: 420,
        maxConcurrent: 2,
      },
      rated: false,
      aliases: 3,
      budget: 13,
      steps: [
        { kind: 'lookups', lookups: [lookup(1, 0, true), lookup(2, 2, true)], keyLimit: null },
        { kind: 'restart', crash: false, budget: Number.POSITIVE_INFINITY },
        { kind: 'lookups', lookups: [lookup(1, 3, true), lookup(1, 0, false), lookup(2, 0, false)], keyLimit: null },
        {
          kind: 'lookups',
          lookups: [
            lookup(0, 2, true),
            lookup(1, 1, true),
            lookup(2, 2, true),
            lookup(0, 2, false),
            lookup(1, 2, false),
            lookup(0, 0, false),
            lookup(2, 0, false),
            lookup(1, 1, false),
            lookup(1, 2, false),
            lookup(1, 0, true),
          ],
          keyLimit: { alias: 0, afterStarted: 0 },
        },
        { kind: 'clock', minutes: 45 },
        {
          kind: 'lookups',
          lookups: [lookup(2, 0, false), lookup(2, 1, false), lookup(0, 0, false), lookup(0, 1, false)],
          keyLimit: { alias: 1, afterStarted: 8 },
        },
      ],
    };
    const { warehouse } = await temp.open();
    await playOnWarehouseStore(warehouse, fc.constant(found), play, { numRuns: 1, timeout: 5_000 });
  });
});
