import Bottleneck from 'bottleneck';
import type { Logger } from 'pino';
import { carrierDayOf } from '../carriers/carrier-time.js';
import {
  raiseQuotaUsageRows,
  readQuotaLimitReports,
  readQuotaUsage,
  reportQuotaLimit,
} from '../warehouse/quota-usage-store.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { type LimiterCluster, LookupLimiter } from './lookup-limiter.js';
import { QuotaLedger } from './quota-ledger.js';
import type { QuotaPolicy } from './quota-policy.js';
import type { SharedRedis } from './redis-connection.js';
import { redisQuotaStore } from './redis-quota-store.js';
import { warehouseQuotaStore } from './warehouse-quota-store.js';

/** Prefix of every key parcel-recon writes in Redis. */
export const REDIS_KEY_PREFIX = 'parcel-recon';

/** Several workers share the quota through this Redis (`--redis`). */
export interface SharedQuota {
  readonly redis: SharedRedis;
  /** Prefix of every key this product writes in Redis. */
  readonly prefix: string;
}

export interface QuotaLimitingOptions {
  readonly warehouse: Warehouse;
  /** The carrier whose quota the run spends. */
  readonly carrier: string;
  readonly shared?: SharedQuota | undefined;
  readonly policy: QuotaPolicy;
  readonly aliases: readonly string[];
  readonly now: () => number;
  /** Lookups the run may spend at most, whatever the quota leaves (`--max-lookups`). */
  readonly maxLookups?: number | undefined;
  /** The tracking client's timeout: a shared lookup running longer belongs to a dead worker. */
  readonly clientTimeoutMs: number;
}

/** The ledger of a run's quota, the limiter it starts once its work is known, and their closing. */
export interface QuotaLimiting {
  readonly ledger: QuotaLedger;
  /** Aborted when the shared Redis is lost: the quota is in doubt, so the run stops spending. */
  readonly lost: AbortSignal | undefined;
  /** Builds the limiter (clustered through Redis when the quota is shared); once per run. */
  startLimiter(): LookupLimiter;
  /** Writes the counts last seen in a shared ledger into this warehouse (which `merge` takes the largest of). */
  recordSharedCounts(): Promise<void>;
  /** Stops the limiter, gives back what was reserved and not spent, and disconnects from a shared Redis. */
  close(log: Logger): Promise<void>;
}

/** A shared lookup that has not finished in this long belongs to a dead worker: its capacity comes back. */
const SHARED_JOB_MARGIN_MS = 5_000;

/**
 * Lookups the ledger first reserves ahead per key: together no more than the lookups in flight at
 * once. The ledger grows a key's chunk (see MAX_RESERVATION_GROWTH) only when its writes fall behind.
 */
function reservationChunk(policy: QuotaPolicy, aliases: readonly string[]): number {
  return Math.max(1, Math.floor(policy.maxConcurrent / Math.max(1, aliases.length)));
}

/**
 * Chooses where the day's quota is kept and opens its ledger: the warehouse's `quota_usage` table, or
 * with a shared Redis a hash there, floored by what this warehouse already counted today (a Redis that
 * lost its data, runs before `--redis`).
 */
export async function openQuotaLimiting(options: QuotaLimitingOptions): Promise<QuotaLimiting> {
  const { warehouse, carrier, shared, policy, aliases, now } = options;
  // Its own connection, so a reservation never waits behind a batch load.
  const quotaConnection = await warehouse.openSession();
  let store = warehouseQuotaStore(quotaConnection, carrier);
  if (shared) {
    const redisStore = redisQuotaStore(shared.redis.client, shared.prefix);
    const today = carrierDayOf(now(), policy.dayUtcOffsetMinutes);
    await redisStore.floor(today, await readQuotaUsage(quotaConnection, carrier, today));
    for (const alias of (await readQuotaLimitReports(quotaConnection, carrier, today)).keys())
      await redisStore.reportLimit(today, alias);
    store = redisStore;
  }
  // Shared, the ledger reserves exactly what a group of lookups is about to spend: nothing sits reserved in one worker while another is refused.
  const ledger = new QuotaLedger(store, policy, aliases, now, shared ? 0 : reservationChunk(policy, aliases));
  await ledger.open();

  let limiter: LookupLimiter | undefined;
  let cluster: LimiterCluster | undefined;
  // The warehouse keeps the shared counts and limit answers this worker saw, for `quota` and the reports.
  const recordSharedCounts = async () => {
    if (!shared) return;
    await raiseQuotaUsageRows(quotaConnection, carrier, ledger.carrierDay, ledger.storedCounts());
    for (const alias of ledger.limitReported())
      await reportQuotaLimit(quotaConnection, carrier, ledger.carrierDay, alias);
  };
  return {
    ledger,
    lost: shared?.redis.lost,
    startLimiter: () => {
      if (shared) {
        cluster = {
          // Its own connection (Bottleneck adds a subscriber duplicated from it), connecting at once and never reconnecting either.
          connection: new Bottleneck.IORedisConnection({
            client: shared.redis.client.duplicate({ lazyConnect: false }),
          }),
          idPrefix: `${shared.prefix}:limits:${ledger.carrierDay}`,
          expirationMs: options.clientTimeoutMs + SHARED_JOB_MARGIN_MS,
        };
      }
      limiter = new LookupLimiter(ledger, policy, now, options.maxLookups, cluster);
      return limiter;
    },
    recordSharedCounts,
    close: async (log) => {
      await limiter?.stop();
      if (!shared) {
        await ledger.settle();
        return;
      }
      // Redis may be gone: what stays reserved there only overcounts, which is safe.
      await ledger
        .settle()
        .catch((error: unknown) =>
          log.warn(
            { error: error instanceof Error ? error.message : String(error) },
            'reservations not given back to Redis',
          ),
        );
      await recordSharedCounts();
      await cluster?.connection.disconnect(false);
    },
  };
}
