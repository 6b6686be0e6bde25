import { z } from 'zod';
import type { CarrierDefinition } from '../carriers/carrier-definition.js';
import { CARRIER_UTC_OFFSET_MINUTES } from '../carriers/carrier-time.js';
import { DEFAULT_CARRIER_ID, findCarrier, KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { groupThousands } from '../carriers/money.js';

/** The carrier a run names, or the one a warehouse without carriers held. */
function carrierOf(id: string): CarrierDefinition {
  const carrier = findCarrier(id) ?? findCarrier(DEFAULT_CARRIER_ID);
  if (carrier === undefined) throw new RangeError(`unknown carrier ${id}`);
  return carrier;
}

const DEFAULT_QUOTA = carrierOf(DEFAULT_CARRIER_ID).quota;

export const QuotaPolicySchema = z.object({
  /** Lookups one key may make per carrier day (the carrier answers APIKEY_LIMIT past it). */
  perKeyDaily: z.number().int().min(0).default(DEFAULT_QUOTA.callsPerKeyPerDay),
  /** Lookups all keys together may make per carrier day. */
  globalDaily: z.number().int().min(0).default(DEFAULT_QUOTA.callsPerDay),
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

/** The quota settings of a run: unset, the carrier's own limit; a rate of 0, no cap but the concurrency. */
export type CarrierQuotaSettings = Omit<QuotaPolicyInput, 'requestsPerSecond'> & {
  readonly requestsPerSecond?: number | undefined;
};

/**
 * The policy of a run of `carrier`: the settings' limits of calls, the carrier's own (its
 * definition's `quota`) where they are unset, as its lookups.
 */
export function carrierQuotaPolicy(carrier: string, calls: CarrierQuotaSettings): QuotaPolicy {
  const known = carrierOf(carrier);
  const { requestsPerSecond, ...rest } = calls;
  const rate = requestsPerSecond ?? known.quota.callsPerSecond;
  const withDefaults: QuotaPolicyInput = {
    ...rest,
    perKeyDaily: calls.perKeyDaily ?? known.quota.callsPerKeyPerDay,
    globalDaily: calls.globalDaily ?? known.quota.callsPerDay,
    ...(rate === undefined || rate === 0 ? {} : { requestsPerSecond: rate }),
  };
  return lookupPolicy(QuotaPolicySchema.parse(withDefaults), known.callsPerLookup);
}

/** How the settings' help names each carrier's limit of `what` (`unset` where it has none). */
export function carrierLimitsText(
  what: (quota: CarrierDefinition['quota']) => number | undefined,
  unset = 'none',
): string {
  const limitOf = (known: CarrierDefinition) => {
    const limit = what(known.quota);
    return limit === undefined ? unset : groupThousands(limit);
  };
  return `the carrier's: ${KNOWN_CARRIERS.map((known) => `${known.id} ${limitOf(known)}`).join(', ')}`;
}
