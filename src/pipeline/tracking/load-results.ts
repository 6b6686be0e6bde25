import type { Logger } from 'pino';
import type { RunWorkItem } from '../../warehouse/run-input-store.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import type { OrderOutcome } from './order-lookup.js';
import { ResultBatcher } from './result-batcher.js';

export interface ResultLoadOptions {
  readonly warehouse: Warehouse;
  readonly runId: string;
  /** The run's scratch folder. */
  readonly spoolDir: string;
  /** Where the raw spool goes. */
  readonly dataDir: string;
  /** Results committed per warehouse transaction. */
  readonly batchSize: number;
  readonly now: () => number;
  /** The run's carrier. */
  readonly carrier: string;
  readonly log: Logger;
  /** Called after each batch committed while the run goes on. */
  readonly afterCommit: () => Promise<void>;
}

/**
 * The loading side of a tracking run: outcomes go to the ResultBatcher, which spools their answers
 * and commits them in batches while the lookups go on.
 */
export class ResultLoader {
  private readonly batcher: ResultBatcher;
  private readonly stopLoadRetryLog: () => void;

  constructor(private readonly options: ResultLoadOptions) {
    this.batcher = new ResultBatcher(
      options.warehouse,
      options.runId,
      options.spoolDir,
      options.dataDir,
      options.now,
      options.carrier,
    );
    this.stopLoadRetryLog = options.warehouse.onLoadRetry((what) =>
      options.log.warn(
        { what },
        'DuckDB ran out of memory loading a batch: checkpointed and loading it again (a smaller batch size or a larger memory limit avoids it)',
      ),
    );
  }

  add(item: RunWorkItem, alias: string, outcome: OrderOutcome): void {
    this.batcher.add(item.orderCode, alias, item.origin, outcome, item.storedBefore);
  }

  /** A carrier answer that is not the order's outcome (see ResultBatcher.addPassedAnswer). */
  addPassedAnswer(orderCode: string, alias: string, body: Buffer): void {
    this.batcher.addPassedAnswer(orderCode, alias, body);
  }

  /** Whether a batch has gathered (see ResultBatcher.shouldFlush). */
  get full(): boolean {
    return this.batcher.shouldFlush(this.options.batchSize);
  }

  /** Starts committing what has gathered; waits only while the commit before it runs. */
  async commit(): Promise<void> {
    await this.batcher.commitGathering();
    await this.options.afterCommit();
  }

  /** Commits what is left, once every lookup has finished, and compresses the log's last files. */
  commitRest(): Promise<void> {
    return this.batcher.finish();
  }

  close(): void {
    this.stopLoadRetryLog();
  }
}
