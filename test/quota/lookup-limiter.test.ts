import { describe, expect, it, vi } from 'vitest';
import { LookupLimiter, QUOTA_REFUSED } from '../../src/quota/lookup-limiter.js';
import { QuotaLedger } from '../../src/quota/quota-ledger.js';
import { QuotaPolicySchema } from '../../src/quota/quota-policy.js';
import { memoryQuotaStore, START_MS } from './quota-schedules.js';

describe('LookupLimiter', () => {
  // A regression waits for ever (stopping the limiters waits for the lookup parked on the empty reservoir): hence the timeout.
  it('still starts a lookup the ledger holds a reservation for after it refused another key the last of the day', {
    timeout: 5_000,
  }, async () => {
    // Key a's reservation ahead takes the day's last lookup; key b is then refused by the ledger.
    const policy = QuotaPolicySchema.parse({ perKeyDaily: 2, globalDaily: 2, maxConcurrent: 1 });
    const ledger = new QuotaLedger(memoryQuotaStore([]), policy, ['a', 'b'], () => START_MS, 1);
    await ledger.open();
    const limiter = new LookupLimiter(ledger, policy, () => START_MS);
    try {
      const lookup = async () => 'answered';
      expect(await Promise.all([limiter.schedule('a', lookup), limiter.schedule('b', lookup)])).toEqual([
        'answered',
        QUOTA_REFUSED,
      ]);
      expect(limiter.isSpent('a')).toBe(false);
      const last = limiter.schedule('a', lookup);
      const waited = await Promise.race([last, new Promise((resolve) => setTimeout(resolve, 1_000, 'still waiting'))]);
      expect(waited).toBe('answered');
    } finally {
      await limiter.stop();
    }
  });

  it('lets every lookup through a key with a 2-lookup quota when none was ever sent', { timeout: 5_000 }, async () => {
    const policy = QuotaPolicySchema.parse({ perKeyDaily: 2, maxConcurrent: 1 });
    const ledger = new QuotaLedger(memoryQuotaStore([]), policy, ['a'], () => START_MS, 1);
    await ledger.open();
    const limiter = new LookupLimiter(ledger, policy, () => START_MS);
    try {
      // Each lookup finds the carrier closed: the ledger and the reservoirs get it back.
      const unsent = async () => {
        await limiter.giveBackUnsent('a', ledger.carrierDay);
        return 'not sent';
      };
      for (let i = 0; i < 10; i++) {
        const lookup = limiter.schedule('a', unsent);
        const waited = await Promise.race([
          lookup,
          new Promise((resolve) => setTimeout(resolve, 1_000, 'still waiting')),
        ]);
        expect(waited).toBe('not sent');
      }
      expect(ledger.spentThisRun()).toBe(0);
      expect(limiter.isSpent('a')).toBe(false);
    } finally {
      await limiter.stop();
    }
  });

  it('refuses a lookup the quota has no room for while a started group is still being counted', {
    timeout: 5_000,
  }, async () => {
    const policy = QuotaPolicySchema.parse({ perKeyDaily: 3, maxConcurrent: 1 });
    const ledger = new QuotaLedger(memoryQuotaStore([]), policy, ['a'], () => START_MS, 1);
    await ledger.open();
    const limiter = new LookupLimiter(ledger, policy, () => START_MS);
    // The first group's count is held until three more lookups are scheduled.
    const spend = ledger.spendMany.bind(ledger);
    let countingStarted!: () => void;
    const counting = new Promise<void>((resolve) => {
      countingStarted = resolve;
    });
    let letCount!: () => void;
    const gate = new Promise<void>((resolve) => {
      letCount = resolve;
    });
    let first = true;
    vi.spyOn(ledger, 'spendMany').mockImplementation(async (alias, count) => {
      if (first) {
        first = false;
        countingStarted();
        await gate;
      }
      return spend(alias, count);
    });
    try {
      const lookup = async () => 'answered';
      const scheduled = [limiter.schedule('a', lookup)];
      await counting;
      for (let i = 0; i < 3; i++) scheduled.push(limiter.schedule('a', lookup));
      letCount();
      const settled = await Promise.race([
        Promise.all(scheduled),
        new Promise((resolve) => setTimeout(resolve, 1_000, 'still waiting')),
      ]);
      expect(settled).toEqual(['answered', 'answered', 'answered', QUOTA_REFUSED]);
    } finally {
      await limiter.stop();
    }
  });
});
