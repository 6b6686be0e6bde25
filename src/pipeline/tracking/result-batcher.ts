import { type CarrierInstant, epochMsToInstant } from '../../carrier/contract.js';
import { type LookupResultRow, loadLookupFiles } from '../../warehouse/snapshot-loader.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { AnswerJournal } from './answer-journal.js';
import { BatchFiles } from './batch-files.js';
import type { DeferReason, OrderOutcome } from './order-lookup.js';

/**
 * While a commit runs, up to this many times the batch size gather for the next one: when the
 * warehouse is what limits the run, fewer and larger transactions carry the same results with less
 * work per result (each transaction has a fixed cost: its statements and the WAL's sync).
 */
export const MAX_BATCH_GROWTH = 4;

/** The error code and message of a deferred order's `lookup_results` row. */
export function deferredResult(reason: DeferReason): { readonly errorCode: string; readonly errorMessage: string } {
  return { errorCode: reason.toUpperCase(), errorMessage: `left for a later run: ${reason.replace('_', ' ')}` };
}

/** The journal's answer of a carrier error that came without a body of its own (EXCEPTION after the last attempt). */
const NULL_ANSWER = Buffer.from('null');

/**
 * Gathers lookup outcomes and commits them to the warehouse in batches: each order's snapshot and its
 * `lookup_results` row go in the same transaction, so a crash never keeps one without the other. The
 * answers are written to the batch's files as they come (BatchFiles) and, each on its own, to its
 * AnswerJournal, which a resumed run loads when the process was killed before the batch committed.
 * The raw spool file is complete before the batch commits (a crash in between leaves answers in the
 * spool that are loaded again: replay keeps the later).
 */
export class ResultBatcher {
  private files: BatchFiles;
  private journal: AnswerJournal;
  private results: LookupResultRow[] = [];
  /** Whether a snapshot gathered may be of an order the warehouse held before the run. */
  private mayHoldStoredOrders = false;
  private flushing: Promise<void> = Promise.resolve();
  private flushesUnsettled = 0;

  constructor(
    private readonly warehouse: Warehouse,
    private readonly runId: string,
    private readonly spoolDir: string,
    /** Where the raw spool goes (`raw/RUN_ID/` under it). */
    private readonly dataDir: string,
    private readonly now: () => number,
  ) {
    this.files = new BatchFiles(spoolDir, dataDir, runId);
    this.journal = new AnswerJournal(spoolDir);
  }

  /**
   * `storedBefore`: whether the warehouse held the order asked for when the run's work list was made.
   * A run asks for each code once, so an answer naming the code asked, of an order not held then, is
   * of a new order. `finishedAt`: when the answer came, now unless it is an answer loaded again.
   */
  add(
    orderCode: string,
    alias: string,
    origin: string,
    outcome: OrderOutcome,
    storedBefore: boolean,
    finishedAt: CarrierInstant = epochMsToInstant(this.now()),
  ): void {
    const journaled = {
      askedCode: orderCode,
      accountAlias: alias,
      origin,
      attempts: outcome.attempts,
      seenAt: finishedAt,
    };
    const row = (
      outcomeName: LookupResultRow['outcome'],
      errorCode: string | null,
      errorMessage: string | null,
    ): LookupResultRow => ({
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
        if (storedBefore || outcome.orderCode !== orderCode) this.mayHoldStoredOrders = true;
        this.journal.write(
          { ...journaled, kind: 'ok', orderCode: outcome.orderCode, errorCode: null, errorMessage: null },
          outcome.body,
        );
        this.files.addSnapshot(
          { runId: this.runId, orderCode: outcome.orderCode, accountAlias: alias, seenAt: finishedAt },
          outcome.body,
        );
        this.results.push(row('ok', null, null));
        break;
      case 'carrier_error':
        this.journal.write(
          {
            ...journaled,
            kind: 'carrier_error',
            orderCode,
            errorCode: outcome.errorCode,
            errorMessage: outcome.errorMessage,
          },
          outcome.body.length > 0 ? outcome.body : NULL_ANSWER,
        );
        if (outcome.body.length > 0)
          this.files.addOtherAnswer(
            { runId: this.runId, orderCode, accountAlias: alias, seenAt: finishedAt },
            outcome.body,
          );
        this.results.push(row('carrier_error', outcome.errorCode, outcome.errorMessage));
        break;
      case 'transport_error':
        this.results.push(row('transport_error', outcome.errorCode, outcome.errorMessage));
        break;
      case 'deferred': {
        const deferral = deferredResult(outcome.reason);
        this.results.push(row('deferred', deferral.errorCode, deferral.errorMessage));
        break;
      }
    }
  }

  /** A carrier error answer that is no order's outcome (retried, or a spent key): to the raw spool only. */
  addPassedAnswer(orderCode: string, alias: string, body: Buffer): void {
    if (body.length === 0) return;
    this.files.addOtherAnswer(
      { runId: this.runId, orderCode, accountAlias: alias, seenAt: epochMsToInstant(this.now()) },
      body,
    );
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
    const files = this.files;
    const journal = this.journal;
    const results = this.results;
    const newOrdersOnly = !this.mayHoldStoredOrders;
    this.files = new BatchFiles(this.spoolDir, this.dataDir, this.runId);
    this.journal = new AnswerJournal(this.spoolDir);
    this.results = [];
    this.mayHoldStoredOrders = false;
    // The batch's files are finished at once, while the batch before commits; this batch commits after both.
    const written = files.finish();
    written.catch(() => undefined);
    this.flushesUnsettled++;
    this.flushing = this.flushing
      .then(async () => {
        const { snapshotFile } = await written;
        const snapshotFiles = snapshotFile === undefined ? [] : [snapshotFile];
        if (results.length > 0)
          await loadLookupFiles(this.warehouse, { snapshotFiles, results, newOrdersOnly }, this.spoolDir);
        await journal.remove();
      })
      .finally(async () => {
        this.flushesUnsettled--;
        journal.close();
        await files.removeSnapshotFile();
      });
    return this.flushing;
  }
}
