import Bottleneck from 'bottleneck';
import { nextCarrierDayStart } from '../carriers/carrier-time.js';
import type { QuotaLedger } from './quota-ledger.js';
import type { QuotaPolicy } from './quota-policy.js';
import { RedisUnavailableError } from './redis-connection.js';

/** What `schedule` returns instead of running the task when today's quota cannot cover it. */
export const QUOTA_REFUSED = Symbol('quota refused');

/** Why a key takes no more lookups: the day's quota, the run's budget, or the carrier does not know the key. */
export type SpentReason = 'quota' | 'max_lookups' | 'key_not_found';

/** How often the rate limiter's token bucket is refilled: bursts stay within 1/10 of a second's worth. */
const RATE_REFILL_MS = 100;
/** How often Bottleneck checks whether a refill is due; each refill comes at most this late. */
const RATE_HEARTBEAT_MS = 2;

/** Bottleneck's clustered mode: limiters of the same id share their counts through Redis, across processes. */
export interface LimiterCluster {
  readonly connection: Bottleneck.IORedisConnection;
  /** Names the shared limiters; the same for every worker of one carrier day, so a new day starts fresh. */
  readonly idPrefix: string;
  /** A job holding capacity longer than this is dropped from the shared count (a crashed worker's jobs). */
  readonly expirationMs: number;
}

/** How long Bottleneck keeps a clustered limiter's state in Redis after its last use. */
const CLUSTER_STATE_TTL_MS = 15 * 60_000;
/** A clustered rate limiter refills on its heartbeat, which is a Redis script: not every 2 ms. */
const CLUSTER_HEARTBEAT_MS = 50;
/** Time a clustered limiter gets to stop when Redis is gone. */
const CLUSTER_STOP_MS = 2_000;

interface PendingLookup {
  readonly task: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Schedules lookups with Bottleneck: one limiter per key, chained to a global limiter holding the
 * concurrency cap, chained to a token bucket holding the requests-per-second cap. Reservoirs come from
 * the ledger and are reset at the carrier's midnight (Bottleneck's own refresh interval counts from
 * the limiter's creation, not from midnight).
 *
 * Bottleneck's local datastore yields to the event loop several times per job, which caps it near a
 * few hundred jobs per second; so lookups go to it in groups, one job per group weighing as many
 * lookups as it holds. Weight counts against concurrency, reservoirs and the rate alike. A group is
 * handed over when it is full or when the alias has no group in Bottleneck: an idle limiter starts a
 * lookup at once, a busy one gathers full groups.
 * A lookup runs only after the ledger has counted it.
 */
export class LookupLimiter {
  private readonly global: Bottleneck;
  private readonly rate: Bottleneck | undefined;
  private readonly perKey = new Map<string, Bottleneck>();
  /** Scheduled and not yet started, per alias: they will spend, so they count against what is left. */
  private readonly waiting = new Map<string, number>();
  /** Lookups gathering into the alias's next group. */
  private readonly forming = new Map<string, PendingLookup[]>();
  /** Groups handed to Bottleneck and not finished yet, per alias. */
  private readonly groupsInFlight = new Map<string, number>();
  private readonly groupSize: number;
  /** Keys the carrier answered APIKEY_NOT_FOUND for: every lookup with them would be refused too. */
  private readonly unknownKeys = new Set<string>();
  private dayTimer: NodeJS.Timeout | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly ledger: QuotaLedger,
    private readonly policy: QuotaPolicy,
    private readonly now: () => number,
    /** Lookups this run may spend at most, whatever the quota leaves (`--max-lookups`). */
    private readonly runBudget = Number.POSITIVE_INFINITY,
    /**
     * Shares the limits with other workers. The daily quota is then held by the ledger's store, which
     * checks and reserves atomically; the limiters share concurrency and rate and hold no reservoir
     * (one worker's view of what is left would overwrite another's).
     */
    private readonly cluster?: LimiterCluster,
  ) {
    this.groupSize = Math.max(1, Math.min(32, Math.floor(policy.maxConcurrent / 4)));
    this.global = this.limiter('global', {
      maxConcurrent: policy.maxConcurrent,
      reservoir: cluster ? null : ledger.remainingTotal(),
    });
    if (policy.requestsPerSecond !== undefined) {
      const perRefill = Math.max(1, Math.round((policy.requestsPerSecond * RATE_REFILL_MS) / 1000));
      const refillMs = Math.round((perRefill * 1000) / policy.requestsPerSecond);
      this.rate = this.limiter('rate', {
        reservoir: perRefill,
        reservoirIncreaseInterval: refillMs,
        reservoirIncreaseAmount: perRefill,
        reservoirIncreaseMaximum: perRefill,
        // Bottleneck refills on its heartbeat (every 250 ms by default), whatever the interval says, and
        // counts the next interval from then: a late beat loses rate for good.
        heartbeatInterval: cluster ? CLUSTER_HEARTBEAT_MS : RATE_HEARTBEAT_MS,
      });
      this.global.chain(this.rate);
      // A group never weighs more than one refill, or it could never start.
      this.groupSize = Math.min(this.groupSize, perRefill);
    }
    for (const alias of ledger.aliases) {
      // Clustered, a key's lookups go straight to the global limiter: the shared ledger holds the key's
      // quota, and a chained job's expiration would count its wait for a global slot (a dead worker's
      // slots would then expire the live workers' jobs too).
      if (cluster) {
        this.perKey.set(alias, this.global);
        continue;
      }
      const limiter = this.limiter(`key:${alias}`, { reservoir: ledger.remaining(alias) });
      limiter.chain(this.global);
      this.perKey.set(alias, limiter);
    }
    this.armDayTimer();
  }

  /** A local limiter, or with a cluster the shared one of that name. */
  private limiter(name: string, settings: Bottleneck.ConstructorOptions): Bottleneck {
    if (!this.cluster) return new Bottleneck(settings);
    const limiter = new Bottleneck({
      ...settings,
      datastore: 'ioredis',
      connection: this.cluster.connection,
      id: `${this.cluster.idPrefix}:${name}`,
      timeout: CLUSTER_STATE_TTL_MS,
    });
    // Redis failures reach the jobs that hit them; the run stops on a lost connection by itself.
    limiter.on('error', () => undefined);
    return limiter;
  }

  private totalWaiting(): number {
    let total = 0;
    for (const n of this.waiting.values()) total += n;
    return total;
  }

  /** True when today's quota (or the run's budget) has nothing left for the alias beyond what is already scheduled. */
  isSpent(alias: string): boolean {
    return this.exhaustedBy(alias) !== undefined;
  }

  /** Why the alias can take no more lookups. */
  spentReason(alias: string): SpentReason {
    return this.exhaustedBy(alias) ?? 'quota';
  }

  /** The carrier does not know the alias's key: no more lookups with it in this run, those waiting are refused unsent. */
  refuseKey(alias: string): void {
    this.unknownKeys.add(alias);
  }

  private exhaustedBy(alias: string): SpentReason | undefined {
    if (this.unknownKeys.has(alias)) return 'key_not_found';
    if (
      this.ledger.remaining(alias) - (this.waiting.get(alias) ?? 0) <= 0 ||
      this.ledger.remainingTotal() - this.totalWaiting() <= 0
    )
      return 'quota';
    if (this.ledger.spentThisRun() + this.totalWaiting() >= this.runBudget) return 'max_lookups';
    return undefined;
  }

  /** Runs `task` within the alias's and the global limits, or returns QUOTA_REFUSED. */
  schedule<T>(alias: string, task: () => Promise<T>): Promise<T | typeof QUOTA_REFUSED> {
    if (!this.perKey.has(alias) || this.isSpent(alias)) return Promise.resolve(QUOTA_REFUSED);
    this.waiting.set(alias, (this.waiting.get(alias) ?? 0) + 1);
    return new Promise<T | typeof QUOTA_REFUSED>((resolve, reject) => {
      const forming = this.forming.get(alias) ?? [];
      forming.push({ task, resolve: resolve as (value: unknown) => void, reject });
      this.forming.set(alias, forming);
      if (forming.length >= this.groupSize || (this.groupsInFlight.get(alias) ?? 0) === 0) this.submit(alias);
    });
  }

  /** Hands the alias's forming group to Bottleneck as one job weighing one per lookup. */
  private submit(alias: string): void {
    const lookups = this.forming.get(alias);
    if (!lookups || lookups.length === 0) return;
    this.forming.delete(alias);
    this.groupsInFlight.set(alias, (this.groupsInFlight.get(alias) ?? 0) + 1);
    let started = false;
    const release = () => this.waiting.set(alias, (this.waiting.get(alias) ?? 0) - lookups.length);
    this.perKey
      .get(alias)!
      .schedule(
        { weight: lookups.length, ...(this.cluster ? { expiration: this.cluster.expirationMs } : {}) },
        async () => {
          started = true;
          let spendable: number;
          try {
            spendable = this.unknownKeys.has(alias) ? 0 : await this.ledger.spendMany(alias, lookups.length);
          } finally {
            // Counted as waiting until the ledger has counted them as spent: in between, what is left would
            // seem larger than it is, and a lookup scheduled then would wait for a reservoir that stays empty.
            release();
          }
          // The reservoirs took the whole group; what the ledger refused goes back to them, or a lookup
          // it still allows (another key's reservation) would wait for a reservoir that stays empty.
          if (spendable < lookups.length && !this.cluster) {
            const refused = lookups.length - spendable;
            await Promise.all([
              this.perKey.get(alias)!.incrementReservoir(refused),
              this.global.incrementReservoir(refused),
            ]);
          }
          await Promise.all(
            lookups.map(async (lookup, index) => {
              if (index >= spendable) return lookup.resolve(QUOTA_REFUSED);
              try {
                lookup.resolve(await lookup.task());
              } catch (error) {
                lookup.reject(error);
              }
            }),
          );
        },
      )
      .catch((error: unknown) => {
        if (!started) release();
        // A clustered limiter fails when Redis does: the lookups wait for the next run.
        const cause =
          this.cluster && !started && !(error instanceof Bottleneck.BottleneckError)
            ? new RedisUnavailableError(`shared limiter: ${error instanceof Error ? error.message : String(error)}`)
            : error;
        for (const lookup of lookups) lookup.reject(cause);
      })
      .finally(() => {
        this.groupsInFlight.set(alias, (this.groupsInFlight.get(alias) ?? 0) - 1);
        if ((this.groupsInFlight.get(alias) ?? 0) === 0) this.submit(alias);
      });
  }

  /**
   * A lookup the ledger counted on `day` was never sent (no connection to the carrier was made): the
   * ledger and the reservoirs that took it get it back.
   */
  async giveBackUnsent(alias: string, day: string): Promise<void> {
    if (!this.ledger.unspend(alias, 1, day) || this.cluster) return;
    await Promise.all([this.perKey.get(alias)!.incrementReservoir(1), this.global.incrementReservoir(1)]);
  }

  /** Resets every reservoir from the ledger (after a day change or an APIKEY_LIMIT answer). */
  async refreshReservoirs(): Promise<void> {
    await this.ledger.open();
    if (this.cluster) return;
    // Lookups already waiting must still get to start (the ledger then refuses them); a reservoir
    // below their number would leave them waiting forever.
    await this.global.updateSettings({ reservoir: this.ledger.remainingTotal() + this.totalWaiting() });
    for (const [alias, limiter] of this.perKey) {
      await limiter.updateSettings({ reservoir: this.ledger.remaining(alias) + (this.waiting.get(alias) ?? 0) });
    }
  }

  private armDayTimer(): void {
    const now = this.now();
    const delay = nextCarrierDayStart(now, this.policy.dayUtcOffsetMinutes) - now;
    this.dayTimer = setTimeout(() => {
      void this.refreshReservoirs().finally(() => this.armDayTimer());
    }, delay + 10);
    this.dayTimer.unref();
  }

  /** Stops the limiters; lookups still waiting are dropped (they reject). Stopping again waits for the first stop. */
  stop(): Promise<void> {
    this.stopped ??= this.stopLimiters();
    return this.stopped;
  }

  private async stopLimiters(): Promise<void> {
    if (this.dayTimer) clearTimeout(this.dayTimer);
    for (const alias of [...this.forming.keys()]) this.submit(alias);
    for (const limiter of new Set([...this.perKey.values(), this.global, ...(this.rate ? [this.rate] : [])])) {
      const stopped = limiter.stop({ dropWaitingJobs: true });
      if (!this.cluster) await stopped;
      else await boundedWait(stopped, CLUSTER_STOP_MS);
    }
  }
}

/** True for the rejection of a lookup that was still waiting when the limiter stopped. */
export function isLimiterRefusal(error: unknown): boolean {
  return error instanceof Bottleneck.BottleneckError;
}

/** Waits for `work` at most `ms`; a clustered limiter's stop never finishes when Redis is gone. */
async function boundedWait(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
