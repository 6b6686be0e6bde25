import { epochMsToInstant } from '../carrier/contract.js';
import { loadLookupBatch, spooledSnapshot, type LookupResultRow, type SpooledSnapshot } from '../warehouse/snapshot-loader.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import type { OrderOutcome } from './order-lookup.js';
import { writeRawSpoolFile, type RawResponse } from './raw-spool.js';

/**
 * While a commit runs, up to this many times the batch size gather for the next one: when the
 * warehouse is what limits the run, fewer and larger transactions carry the same results with less
 * work per result (each transaction has a fixed cost: its statements and the WAL's sync).
 */
export const MAX_BATCH_GROWTH = 4;

/**
 * Gathers lookup outcomes and commits them to the warehouse in batches: each order's snapshot and its
 * `lookup_results` row go in the same transaction, so a crash never keeps one without the other. The
 * batch's raw answer bodies go to the run's raw spool file before (written while the batch before
 * commits; a crash in between leaves answers in the spool whose orders are looked up again: replay
 * keeps the later).
 */
export class ResultBatcher {
  /** Written as spool lines on arrival: a batch gathering holds strings, not the snapshots' objects. */
  private snapshots: SpooledSnapshot[] = [];
  private results: LookupResultRow[] = [];
  private raw: RawResponse[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private flushesUnsettled = 0;

  constructor(
    private readonly warehouse: Warehouse,
    private readonly runId: string,
    private readonly spoolDir: string,
    /** Where the raw spool goes (`raw/RUN_ID/` under it). */
    private readonly dataDir: string,
    private readonly now: () => number,
  ) {}

  add(orderCode: string, alias: string, origin: string, outcome: OrderOutcome): void {
    const finishedAt = epochMsToInstant(this.now());
    const row = (outcomeName: LookupResultRow['outcome'], errorCode: string | null, errorMessage: string | null): LookupResultRow => ({
      runId: this.runId,
      orderCode,
      accountAlias: alias,
      outcome: outcomeName,
      errorCode,
      errorMessage,
      attempts: outcome.attempts,
      origin,
      finishedAt,
    });
    if ((outcome.kind === 'ok' || outcome.kind === 'carrier_error') && outcome.body !== '') {
      this.raw.push({ orderCode, accountAlias: alias, seenAt: finishedAt, body: outcome.body });
    }
    switch (outcome.kind) {
      case 'ok':
        this.snapshots.push(spooledSnapshot({ orderCode: outcome.snapshot.orderCode, body: outcome.body, accountAlias: alias, seenAt: finishedAt, runId: this.runId }));
        this.results.push(row('ok', null, null));
        break;
      case 'carrier_error':
        this.results.push(row('carrier_error', outcome.errorCode, outcome.errorMessage));
        break;
      case 'transport_error':
        this.results.push(row('transport_error', outcome.errorCode, outcome.errorMessage));
        break;
      case 'deferred':
        this.results.push(row('deferred', outcome.reason.toUpperCase(), `left for a later run: ${outcome.reason.replace('_', ' ')}`));
        break;
    }
  }

  /**
   * Whether to commit what has gathered now: once `batchSize` results have, if no commit is running;
   * else only at MAX_BATCH_GROWTH times as many (and the caller waits for the running commit).
   */
  shouldFlush(batchSize: number): boolean {
    const gathered = this.results.length;
    return gathered >= batchSize && (this.flushesUnsettled === 0 || gathered >= batchSize * MAX_BATCH_GROWTH);
  }

  /**
   * Starts committing what has gathered and resolves once the flush before it has committed, so the
   * next batch gathers (and lookups go on) while this one commits: at most one commit waits behind
   * another. A failed commit rejects the next call to `flush` or `commitGathering`.
   */
  async commitGathering(): Promise<void> {
    const previous = this.flushing;
    const current = this.flush();
    // Awaited by the next call; until then its failure must not count as unhandled.
    current.catch(() => undefined);
    await previous;
  }

  /** Commits what has gathered; flushes run one after another. */
  flush(): Promise<void> {
    const snapshots = this.snapshots;
    const results = this.results;
    const raw = this.raw;
    this.snapshots = [];
    this.results = [];
    this.raw = [];
    // The raw answers go to disk at once, while the batch before commits; this batch commits after both.
    const spooled = writeRawSpoolFile(this.dataDir, this.runId, raw);
    spooled.catch(() => undefined);
    this.flushesUnsettled++;
    this.flushing = this.flushing
      .then(async () => {
        await spooled;
        if (results.length > 0) await loadLookupBatch(this.warehouse, { snapshots, results }, this.spoolDir);
      })
      .finally(() => this.flushesUnsettled--);
    return this.flushing;
  }
}
