/** A carrier whose lookup is more than one call (GHN: detail, then fees) gets the settings' limits of calls as lookups. */
import { describe, expect, it } from 'vitest';
import { DOCUMENTED_LIMITS } from '../../src/carriers/247express/contract.js';
import { GHN } from '../../src/carriers/ghn/carrier.js';
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
  });

  it("takes each carrier's own limits where the settings leave them unset: GHN's cautious ones, 247Express's documented ones", () => {
    expect(carrierQuotaPolicy('ghn', {})).toMatchObject({
      perKeyDaily: GHN.quota.callsPerKeyPerDay / 2,
      globalDaily: GHN.quota.callsPerDay / 2,
      requestsPerSecond: (GHN.quota.callsPerSecond ?? Number.NaN) / 2,
    });
    expect(GHN.quota.callsPerSecond).toBeGreaterThan(0);
    expect(carrierQuotaPolicy('247express', {})).toMatchObject({
      perKeyDaily: DOCUMENTED_LIMITS.lookupsPerKeyPerDay,
      globalDaily: DOCUMENTED_LIMITS.lookupsPerDay,
    });
    expect(carrierQuotaPolicy('247express', {}).requestsPerSecond).toBeUndefined();
    expect(carrierQuotaPolicy('ghn', { requestsPerSecond: 0 }).requestsPerSecond).toBeUndefined();
    // A limit set is the run's, whatever the carrier's own.
    expect(carrierQuotaPolicy('ghn', { perKeyDaily: 10, requestsPerSecond: 2 })).toMatchObject({
      perKeyDaily: 5,
      requestsPerSecond: 1,
    });
  });
});
