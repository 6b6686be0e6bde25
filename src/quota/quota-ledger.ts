import { carrierDayOf } from '../carriers/carrier-time.js';
import { type QuotaPolicy, TOTAL_ALIAS } from './quota-policy.js';

/** Where the ledger persists: lookups per carrier day per key alias, '*' for the total. */
export interface QuotaUsageStore {
  read(day: string): Promise<Map<string, number>>;
  /**
   * Adds up to `lookups` to the key's count and to the total, never past `limits`; resolves with how
   * many were added and, from a store other processes also write, the counts after the change.
   */
  reserve(day: string, alias: string, lookups: number, limits: QuotaLimits): Promise<Reservation>;
  /** Records that the carrier answered APIKEY_LIMIT for the key that day; the counts stay what was sent. */
  reportLimit(day: string, alias: string): Promise<void>;
  /** The keys the carrier answered APIKEY_LIMIT for that day. */
  readLimitReports(day: string): Promise<ReadonlySet<string>>;
  /** Gives back `lookups` reserved and not spent; `countAfter` is the key's count after, as this process sees it. */
  release(day: string, alias: string, lookups: number, countAfter: number): Promise<void>;
}

/** Counts the ledger may reach: per key and over all keys (the reserves already taken off). */
export interface QuotaLimits {
  readonly perKey: number;
  readonly total: number;
}

export interface Reservation {
  readonly granted: number;
  /** The key's count and the total after the reservation, when other processes share the store. */
  readonly counts?: { readonly key: number; readonly total: number };
}

export interface KeyQuotaState {
  readonly alias: string;
  readonly used: number;
  readonly limit: number;
  readonly remaining: number;
  readonly spentThisRun: number;
  readonly exhausted: boolean;
}

/**
 * How far a key's reservation chunk may grow past its first size: lookups that outrun the writes
 * reserving for them double it, up to this many times the first.
 */
export const MAX_RESERVATION_GROWTH = 8;

/**
 * The daily lookup ledger. It is written ahead of the requests it covers: before a lookup is sent,
 * the ledger already counts it, reserving a few at a time so that not every request is a write. A
 * crash can only leave a reservation unspent (overcount by at most one chunk), never an undercount;
 * `settle` gives back what a run reserved and did not spend.
 *
 * A key's chunk starts at `reservationChunk`. When its lookups use up a reservation while the next one
 * is still being written (the store is slower than the lookups), the chunk doubles, up to
 * MAX_RESERVATION_GROWTH times the first: lookups then rarely wait for a write, and a crash still
 * overcounts by a bounded amount.
 */
export class QuotaLedger {
  private day = '';
  /** Counts in the store, as this process last wrote or read them. */
  private stored = new Map<string, number>();
  /** Reserved in the store and not yet spent, per alias. */
  private readonly reserved = new Map<string, number>();
  private readonly spent = new Map<string, number>();
  private readonly exhausted = new Set<string>();
  private readonly toppingUp = new Set<string>();
  /** Each key's current reservation chunk. */
  private readonly chunks = new Map<string, number>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: QuotaUsageStore,
    private readonly policy: QuotaPolicy,
    readonly aliases: readonly string[],
    private readonly now: () => number,
    private readonly reservationChunk: number,
  ) {}

  get carrierDay(): string {
    return this.day;
  }

  async open(): Promise<void> {
    await this.serialized(() => this.switchDayIfNeeded());
  }

  /** Lookups still allowed today for the alias, with the global allowance taken into account. */
  remaining(alias: string): number {
    if (this.exhausted.has(alias)) return 0;
    const reservedLeft = this.reserved.get(alias) ?? 0;
    const key = this.policy.perKeyDaily - this.policy.reservePerKey - (this.stored.get(alias) ?? 0);
    const total = this.policy.globalDaily - this.policy.reserveGlobal - (this.stored.get(TOTAL_ALIAS) ?? 0);
    return Math.max(0, Math.min(key, total)) + reservedLeft;
  }

  /** Lookups still allowed today over all keys together. */
  remainingTotal(): number {
    let reservedLeft = 0;
    for (const n of this.reserved.values()) reservedLeft += n;
    const total = this.policy.globalDaily - this.policy.reserveGlobal - (this.stored.get(TOTAL_ALIAS) ?? 0);
    return Math.max(0, total) + reservedLeft;
  }

  /**
   * Counts up to `count` lookups for the alias before they are sent; resolves with how many may go
   * (fewer when today's allowance runs out). Reservations are topped up in the background before
   * they run out, so lookups rarely wait for a write; at most one chunk is reserved and unspent.
   */
  spendMany(alias: string, count: number): Promise<number> {
    // Covered by what is already reserved today: no write, no waiting behind one.
    const reservedLeft = this.reserved.get(alias) ?? 0;
    const today = carrierDayOf(this.now(), this.policy.dayUtcOffsetMinutes) === this.day;
    const covered = today && !this.exhausted.has(alias) && reservedLeft >= count;
    // The lookups caught up with a top-up still being written: reserve further ahead from now on.
    if (!covered && this.toppingUp.has(alias))
      this.chunks.set(alias, Math.min(this.chunkOf(alias) * 2, this.reservationChunk * MAX_RESERVATION_GROWTH));
    const granted = covered
      ? Promise.resolve(this.take(alias, count))
      : this.serialized(async () => {
          await this.switchDayIfNeeded();
          if (this.exhausted.has(alias)) return 0;
          const wanted = Math.min(count, this.remaining(alias));
          const left = this.reserved.get(alias) ?? 0;
          if (wanted > left) await this.reserve(alias, wanted - left);
          // The carrier may have answered APIKEY_LIMIT while the reservation was written: nothing more goes.
          if (this.exhausted.has(alias)) return 0;
          // A shared store may grant less than this process expected: others spent meanwhile.
          return this.take(alias, Math.max(0, Math.min(wanted, this.reserved.get(alias) ?? 0)));
        });
    void granted.then(() => this.topUp(alias)).catch(() => undefined);
    return granted;
  }

  private take(alias: string, count: number): number {
    this.reserved.set(alias, (this.reserved.get(alias) ?? 0) - count);
    this.spent.set(alias, (this.spent.get(alias) ?? 0) + count);
    return count;
  }

  /**
   * Lookups counted on `day` that were never sent (no connection to the carrier was made): reserved
   * again, for the next lookups or for `settle` to give back. False when the ledger has moved on to
   * another day since, whose reservations never covered them: they stay counted (an overcount).
   */
  unspend(alias: string, count: number, day: string): boolean {
    if (day !== this.day) return false;
    this.spent.set(alias, (this.spent.get(alias) ?? 0) - count);
    this.reserved.set(alias, (this.reserved.get(alias) ?? 0) + count);
    return true;
  }

  private chunkOf(alias: string): number {
    return this.chunks.get(alias) ?? this.reservationChunk;
  }

  /** Once less than half a chunk is reserved, reserves up to a full chunk in the background. */
  private topUp(alias: string): Promise<void> {
    if (this.toppingUp.has(alias) || (this.reserved.get(alias) ?? 0) >= this.chunkOf(alias) / 2)
      return Promise.resolve();
    this.toppingUp.add(alias);
    return this.serialized(async () => {
      const reservedLeft = this.reserved.get(alias) ?? 0;
      const chunk = this.chunkOf(alias);
      if (!this.exhausted.has(alias) && reservedLeft < chunk / 2) await this.reserve(alias, chunk - reservedLeft);
    }).finally(() => this.toppingUp.delete(alias));
  }

  /** Writes a reservation of up to `atLeast` lookups (bounded by what is left) ahead of spending. */
  private async reserve(alias: string, atLeast: number): Promise<void> {
    const reservedLeft = this.reserved.get(alias) ?? 0;
    const chunk = Math.min(atLeast, this.remaining(alias) - reservedLeft);
    if (chunk <= 0) return;
    const { granted, counts } = await this.store.reserve(this.day, alias, chunk, {
      perKey: this.policy.perKeyDaily - this.policy.reservePerKey,
      total: this.policy.globalDaily - this.policy.reserveGlobal,
    });
    if (counts) {
      this.stored.set(alias, counts.key);
      this.stored.set(TOTAL_ALIAS, counts.total);
    } else {
      this.bump(alias, granted);
    }
    // Read again: lookups may have taken from the reservation while the write was on its way.
    this.reserved.set(alias, (this.reserved.get(alias) ?? 0) + granted);
  }

  /**
   * The key counts and the total as this process last saw them in the store, less what it holds
   * reserved and unspent (for reconciling a shared store: what was spent, as far as it knows).
   */
  storedCounts(): Map<string, number> {
    let reservedTotal = 0;
    for (const reserved of this.reserved.values()) reservedTotal += reserved;
    return new Map(
      [...this.stored].map(([alias, count]) => [
        alias,
        Math.max(0, count - (alias === TOTAL_ALIAS ? reservedTotal : (this.reserved.get(alias) ?? 0))),
      ]),
    );
  }

  /**
   * The carrier answered APIKEY_LIMIT: the key is spent until the next carrier day. The store keeps
   * the answer beside the count of what was sent, so the next run of the day sends nothing with it.
   */
  exhaust(alias: string): Promise<void> {
    // At once, not after the writes queued before: no lookup may start from what is still reserved.
    this.exhausted.add(alias);
    return this.serialized(async () => {
      await this.giveBack(alias);
      await this.store.reportLimit(this.day, alias);
    });
  }

  /** The keys the carrier answered APIKEY_LIMIT for on the ledger's carrier day. */
  limitReported(): string[] {
    return [...this.exhausted];
  }

  isExhausted(alias: string): boolean {
    return this.exhausted.has(alias) || this.remaining(alias) <= 0;
  }

  /** Gives back what was reserved and not spent; call when a run ends. */
  settle(): Promise<void> {
    return this.serialized(async () => {
      for (const alias of this.aliases) await this.giveBack(alias);
    });
  }

  state(alias: string): KeyQuotaState {
    const used = (this.stored.get(alias) ?? 0) - (this.reserved.get(alias) ?? 0);
    return {
      alias,
      used,
      limit: this.policy.perKeyDaily,
      remaining: this.remaining(alias),
      spentThisRun: this.spent.get(alias) ?? 0,
      exhausted: this.exhausted.has(alias),
    };
  }

  spentThisRun(): number {
    let total = 0;
    for (const n of this.spent.values()) total += n;
    return total;
  }

  private async giveBack(alias: string): Promise<void> {
    const reservedLeft = this.reserved.get(alias) ?? 0;
    if (reservedLeft === 0) return;
    // Taken off before the write, so no lookup can spend what is being given back.
    this.reserved.set(alias, 0);
    this.bump(alias, -reservedLeft);
    await this.store.release(this.day, alias, reservedLeft, this.stored.get(alias) ?? 0);
  }

  private bump(alias: string, delta: number): void {
    this.stored.set(alias, (this.stored.get(alias) ?? 0) + delta);
    this.stored.set(TOTAL_ALIAS, (this.stored.get(TOTAL_ALIAS) ?? 0) + delta);
  }

  private async switchDayIfNeeded(): Promise<void> {
    const day = carrierDayOf(this.now(), this.policy.dayUtcOffsetMinutes);
    if (day === this.day) return;
    if (this.day !== '') for (const alias of this.aliases) await this.giveBack(alias);
    this.day = day;
    this.stored = await this.store.read(day);
    this.reserved.clear();
    this.exhausted.clear();
    for (const alias of await this.store.readLimitReports(day)) this.exhausted.add(alias);
  }

  /** Ledger changes run one at a time, so reservations never race each other. */
  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
