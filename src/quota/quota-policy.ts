import { z } from 'zod';
import { DOCUMENTED_LIMITS } from '../carriers/247express/contract.js';
import { CARRIER_UTC_OFFSET_MINUTES } from '../carriers/carrier-time.js';
import { findCarrier } from '../carriers/known-carriers.js';

export const QuotaPolicySchema = z.object({
  /** Lookups one key may make per carrier day (the carrier answers APIKEY_LIMIT past it). */
  perKeyDaily: z.number().int().min(0).default(DOCUMENTED_LIMITS.lookupsPerKeyPerDay),
  /** Lookups all keys together may make per carrier day. */
  globalDaily: z.number().int().min(0).default(DOCUMENTED_LIMITS.lookupsPerDay),
  /** Lookups per key left unspent for other systems that use the same keys. */
  reservePerKey: z.number().int().min(0).default(0),
  /** Lookups in total left unspent for other systems. */
  reserveGlobal: z.number().int().min(0).default(0),
  /** UTC offset of the carrier day's midnight (UTC+07:00). */
  dayUtcOffsetMinutes: z.number().int().min(-720).max(840).default(CARRIER_UTC_OFFSET_MINUTES),
  /** Requests in flight at once, over all keys. */
  maxConcurrent: z.number().int().min(1).max(1024).default(32),
  /** Requests started per second over all keys; unset means no cap but the concurrency. */
  requestsPerSecond: z.number().positive().optional(),
});

export type QuotaPolicy = z.output<typeof QuotaPolicySchema>;
export type QuotaPolicyInput = z.input<typeof QuotaPolicySchema>;

/** The alias under which the ledger keeps the total of all keys. */
export const TOTAL_ALIAS = '*';

/**
 * A policy of calls as a policy of lookups of up to `callsPerLookup` calls each: the daily limits and
 * the rate divided, rounded so that the calls never exceed them; the reserves rounded up.
 */
export function lookupPolicy(calls: QuotaPolicy, callsPerLookup: number): QuotaPolicy {
  if (callsPerLookup === 1) return calls;
  const lookups = (n: number) => Math.floor(n / callsPerLookup);
  const reserved = (n: number) => Math.ceil(n / callsPerLookup);
  return {
    ...calls,
    perKeyDaily: lookups(calls.perKeyDaily),
    globalDaily: lookups(calls.globalDaily),
    reservePerKey: reserved(calls.reservePerKey),
    reserveGlobal: reserved(calls.reserveGlobal),
    ...(calls.requestsPerSecond === undefined ? {} : { requestsPerSecond: calls.requestsPerSecond / callsPerLookup }),
  };
}

/** The policy of a run of `carrier`: the settings' limits of calls, as its lookups. */
export function carrierQuotaPolicy(carrier: string, calls: QuotaPolicyInput): QuotaPolicy {
  return lookupPolicy(QuotaPolicySchema.parse(calls), findCarrier(carrier)?.callsPerLookup ?? 1);
}
