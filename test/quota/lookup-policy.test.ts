/** A carrier whose lookup is more than one call (GHN: detail, then fees) gets the settings' limits of calls as lookups. */
import { describe, expect, it } from 'vitest';
import { carrierQuotaPolicy, QuotaPolicySchema } from '../../src/quota/quota-policy.js';

describe('carrierQuotaPolicy', () => {
  const calls = {
    perKeyDaily: 1001,
    globalDaily: 5000,
    reservePerKey: 3,
    reserveGlobal: 10,
    requestsPerSecond: 50,
  };

  it("keeps 247Express's limits as they are: one call a lookup", () => {
    expect(carrierQuotaPolicy('247express', calls)).toEqual(QuotaPolicySchema.parse(calls));
  });

  it("halves GHN's, rounding so that two calls a lookup stay within the limits and the reserves", () => {
    expect(carrierQuotaPolicy('ghn', calls)).toMatchObject({
      perKeyDaily: 500,
      globalDaily: 2500,
      reservePerKey: 2,
      reserveGlobal: 5,
      requestsPerSecond: 25,
    });
    expect(carrierQuotaPolicy('ghn', { perKeyDaily: 10 }).requestsPerSecond).toBeUndefined();
  });
});
