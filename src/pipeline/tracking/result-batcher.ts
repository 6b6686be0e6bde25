import { type CarrierInstant, epochMsToInstant } from '../../carriers/carrier-time.js';
import { type LookupResultRow, loadLookupFiles } from '../../warehouse/snapshot-loader.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { AnswerLogFile, compressAnswerLog, removePlainSpoolFile } from '../raw-spool.js';
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

/**
 * Gathers lookup outcomes and commits them to the warehouse in batches: each order's snapshot and its
 * `lookup_results` row go in the same transaction, so a crash never keeps one without the other. Each
 * answer is written once, as it comes, to the batch's file of the answer log (AnswerLogFile), which a
 * resumed run loads when the process was killed before the batch committed (salvageAnswers), and from
 * which the batch's snapshots are loaded. The file is complete before the batch commits (a crash in
 * between leaves answers in the spool that are loaded again: replay keeps the later).
 */
export class ResultBatcher {
  private log: AnswerLogFile;
  private results: LookupResultRow[] = [];
  /** Whether a snapshot gathered may be of an order the warehouse held before the run. */
  private mayHoldStoredOrders = false;
  private flushing: Promise<void> = Promise.resolve();
  private keeping: Promise<void> = Promise.resolve();
  private flushesUnsettled = 0;

  constructor(
    private readonly warehouse: Warehouse,
    private readonly runId: string,
    /** The run's scratch folder, for the loader's staging files. */
    private readonly spoolDir: string,
    /** Where the raw spool goes (`raw/RUN_ID/` under it). */
    private readonly dataDir: string,
    private readonly now: () => number,
    /** The run's carrier: whose answers these are, and whose rows they become. */
    private readonly carrier: string,
  ) {
    this.log = new AnswerLogFile(dataDir, runId);
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
    const sighting = { runId: this.runId, orderCode, accountAlias: alias, seenAt: finishedAt };
    const lookup = { askedCode: orderCode, origin, attempts: outcome.attempts };
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
        this.log.write(
          { ...sighting, orderCode: outcome.orderCode },
          { outcome: 'ok', ...lookup, errorCode: null, errorMessage: null },
          outcome.body,
        );
        this.results.push(row('ok', null, null));
        break;
      case 'carrier_error':
        this.log.write(
          sighting,
          { outcome: 'carrier_error', ...lookup, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage },
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

  /** A carrier error answer that is no order's outcome (retried, or a spent key): kept in the log only. */
  addPassedAnswer(
    orderCode: string,
    alias: string,
    body: Buffer,
    seenAt: CarrierInstant = epochMsToInstant(this.now()),
  ): void {
    if (body.length === 0) return;
    this.log.write({ runId: this.runId, orderCode, accountAlias: alias, seenAt }, { outcome: 'passed' }, body);
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

  /** Commits what has gathered, and waits until every committed batch's log file is kept compressed. */
  async finish(): Promise<void> {
    await this.flush();
    await this.keeping;
  }

  /**
   * Keeps a finished log file of a committed batch compressed: compresses it (compressAnswerLog), then
   * removes the plain file. Apart from the commits, which do not wait for it; a failure is the
   * rejection of `finish`.
   */
  keepCompressed(path: string): void {
    this.keepOnceCompressed(compressAnswerLog(path), path);
  }

  /** Removes the plain file once `compressed` has written its compressed copy, after the files before it. */
  private keepOnceCompressed(compressed: Promise<void>, path: string): void {
    compressed.catch(() => undefined);
    this.keeping = this.keeping.then(() => compressed).then(() => removePlainSpoolFile(path));
    // Awaited by finish; until then a failure must not count as unhandled.
    this.keeping.catch(() => undefined);
  }

  /** Commits what has gathered; flushes run one after another. */
  flush(): Promise<void> {
    const log = this.log;
    const results = this.results;
    const newOrdersOnly = !this.mayHoldStoredOrders;
    this.log = new AnswerLogFile(this.dataDir, this.runId);
    this.results = [];
    this.mayHoldStoredOrders = false;
    // The batch's file is finished at once, while the batch before commits; this batch commits after both.
    const written = log.commit();
    written.catch(() => undefined);
    // Its compressed copy is written while the batch loads from the plain file.
    const compressed = written.then((file) => (file === undefined ? undefined : compressAnswerLog(file.path)));
    compressed.catch(() => undefined);
    this.flushesUnsettled++;
    this.flushing = this.flushing
      .then(async () => {
        const logFile = await written;
        const snapshotFiles = logFile?.snapshots ? [logFile] : [];
        if (results.length > 0)
          await loadLookupFiles(
            this.warehouse,
            { snapshotFiles, results, newOrdersOnly, carrier: this.carrier },
            this.spoolDir,
          );
        if (logFile !== undefined) this.keepOnceCompressed(compressed, logFile.path);
      })
      .finally(() => {
        this.flushesUnsettled--;
        log.close();
      });
    return this.flushing;
  }
}
