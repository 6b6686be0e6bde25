import { epochMsToInstant } from '../carrier/contract.js';
import { loadLookupBatch, type LoadedSnapshot, type LookupResultRow } from '../warehouse/snapshot-loader.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import type { OrderOutcome } from './order-lookup.js';

/**
 * Gathers lookup outcomes and commits them to the warehouse in batches: each order's snapshot and its
 * `lookup_results` row go in the same transaction, so a crash never keeps one without the other.
 */
export class ResultBatcher {
  private snapshots: LoadedSnapshot[] = [];
  private results: LookupResultRow[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly warehouse: Warehouse,
    private readonly runId: string,
    private readonly spoolDir: string,
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
    switch (outcome.kind) {
      case 'ok':
        this.snapshots.push({ snapshot: outcome.snapshot, accountAlias: alias, seenAt: finishedAt, runId: this.runId });
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

  shouldFlush(batchSize: number): boolean {
    return this.results.length >= batchSize;
  }

  /** Commits what has gathered; flushes run one after another. */
  flush(): Promise<void> {
    const snapshots = this.snapshots;
    const results = this.results;
    this.snapshots = [];
    this.results = [];
    this.flushing = this.flushing.then(async () => {
      if (results.length > 0) await loadLookupBatch(this.warehouse, { snapshots, results }, this.spoolDir);
    });
    return this.flushing;
  }
}
