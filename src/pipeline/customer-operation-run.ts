import { join } from 'node:path';
import Bottleneck from 'bottleneck';
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import {
  CustomerOperationsClient,
  type CustomerOperationsClientOptions,
} from '../carrier/client/customer-operations-client.js';
import type { KeyRing } from '../carrier/client/key-ring.js';
import { LookupFailure } from '../carrier/client/lookup-failures.js';
import { carrierDayOf, epochMsToInstant, formatCarrierDateTime } from '../carrier/contract.js';
import { finishRun, startRun } from '../warehouse/run-store.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { DispatchWindow } from './dispatch-window.js';
import { EXIT_CODE, type RunExitCode } from './exit-codes.js';
import { RejectsFile } from './rejects-file.js';
import { newRunId } from './track-run.js';
import { type RetryPolicy, transientRetryOptions } from './transient-retry.js';

/** How a price or images run goes, for a progress bar or periodic log lines. */
export interface OperationProgress {
  readonly operation: 'price' | 'images';
  readonly done: number;
  /** Known when the work list is known up front (images from the warehouse), else what was read so far. */
  readonly total: number;
  readonly ok: number;
  readonly carrierErrors: number;
  readonly failed: number;
  readonly rejected: number;
}

export interface OperationProgressListener {
  start(progress: OperationProgress): void;
  update(progress: OperationProgress): void;
  stop(): void;
}

/**
 * Requests per second and in flight. The carrier documents no quota for these two operations, so the
 * defaults are conservative.
 */
export interface OperationPace {
  readonly requestsPerSecond: number;
  readonly concurrency: number;
}

export const DEFAULT_OPERATION_PACE: OperationPace = { requestsPerSecond: 5, concurrency: 4 };

/** What the price and images runs share. */
export interface CustomerRunOptions {
  readonly job: string;
  readonly keys: KeyRing;
  readonly client: CustomerOperationsClientOptions;
  readonly pace: OperationPace;
  readonly retry: RetryPolicy;
  /** Where the run's spool and rejects file go. */
  readonly dataDir: string;
  /** Results committed per warehouse transaction. */
  readonly batchSize: number;
  readonly now: () => number;
  readonly logger: Logger;
  readonly progress?: OperationProgressListener | undefined;
  /** Aborted to stop the run: no new requests; those in flight finish. */
  readonly stop?: AbortSignal | undefined;
}

/** What every price or images run summary starts with. */
export interface OperationRunIdentity {
  readonly runId: string;
  readonly job: string;
  readonly source: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
}

/** Bottleneck holding the pace: at most `concurrency` in flight, starts spaced by 1/rate seconds. */
export function operationLimiter(pace: OperationPace): Bottleneck {
  return new Bottleneck({ maxConcurrent: pace.concurrency, minTime: Math.ceil(1000 / pace.requestsPerSecond) });
}

/** The answer of a request after its retries, or the failure that ended them. */
export type Asked<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: number }
  | { readonly ok: false; readonly failure: LookupFailure; readonly attempts: number };

/**
 * Sends one request through the limiter, each attempt waiting its turn, retrying transient failures
 * (5xx, resets, timeouts, malformed answers, 429 after its Retry-After) with backoff and jitter.
 */
export async function askWithRetry<T>(
  limiter: Bottleneck,
  send: () => Promise<T>,
  retry: RetryPolicy,
  stopping: AbortSignal,
  onRetry: (failure: LookupFailure, attempt: number) => void,
): Promise<Asked<T>> {
  let attempts = 0;
  try {
    const value = await pRetry(
      () =>
        limiter.schedule(() => {
          attempts++;
          return send();
        }),
      transientRetryOptions(retry, stopping, onRetry),
    );
    return { ok: true, value, attempts };
  } catch (error) {
    if (error instanceof LookupFailure) return { ok: false, failure: error, attempts };
    throw error;
  }
}

/** A run failed when a request failed after every retry; it is partial when stopped; carrier refusals are results. */
export function operationExit(
  failed: number,
  stopped: boolean,
): { exitCode: RunExitCode; exitState: 'ok' | 'partial' | 'failed' } {
  if (failed > 0) return { exitCode: EXIT_CODE.FAILURE, exitState: 'failed' };
  if (stopped) return { exitCode: EXIT_CODE.PARTIAL, exitState: 'partial' };
  return { exitCode: EXIT_CODE.OK, exitState: 'ok' };
}

const PROGRESS_INTERVAL_MS = 500;

/**
 * What a price or images run holds while it runs: its id, spool folder and rejects file, the client,
 * the limiter holding the pace, the window bounding requests in flight, and the progress ticker.
 */
export class CustomerOperationRun {
  readonly runId: string;
  readonly spoolDir: string;
  readonly rejects: RejectsFile;
  readonly log: Logger;
  readonly client: CustomerOperationsClient;
  readonly limiter: Bottleneck;
  readonly stopping: AbortSignal;
  private readonly window: DispatchWindow;
  private readonly startedAt: number;
  private readonly startedClock = performance.now();
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: CustomerRunOptions,
    private readonly progress: () => OperationProgress,
  ) {
    this.startedAt = options.now();
    this.runId = newRunId(options.job, this.startedAt);
    this.spoolDir = join(options.dataDir, 'spool', this.runId);
    this.rejects = new RejectsFile(join(options.dataDir, 'rejects', `${this.runId}.csv`));
    this.log = options.logger.child({ runId: this.runId });
    this.client = new CustomerOperationsClient(options.client);
    this.limiter = operationLimiter(options.pace);
    this.stopping = options.stop ?? new AbortController().signal;
    this.window = new DispatchWindow(options.pace.concurrency * 2);
  }

  /** Records the run's start in `runs` and logs it. */
  async start(warehouse: Warehouse, source: string): Promise<void> {
    const { job, keys, pace } = this.options;
    await startRun(warehouse, {
      runId: this.runId,
      job,
      source,
      startedAt: epochMsToInstant(this.startedAt),
      carrierDay: carrierDayOf(this.startedAt),
    });
    this.log.info({ job, source, keys: keys.aliases, pace }, 'run started');
  }

  /** Starts the progress display. */
  showProgress(): void {
    this.options.progress?.start(this.progress());
    this.ticker = setInterval(() => this.options.progress?.update(this.progress()), PROGRESS_INTERVAL_MS);
  }

  /** Runs `task` once a place in the window is free, without waiting for it; a fault of this program is logged. */
  async dispatch(orderCode: string | null, task: () => Promise<void>): Promise<void> {
    await this.window.enter();
    void task()
      .catch((error: unknown) =>
        this.log.error({ orderCode, error: error instanceof Error ? error.message : String(error) }, 'request broke'),
      )
      .finally(() => this.window.leave());
  }

  /** Waits for the requests in flight, commits the last batch, and closes the client, limiter and rejects file. */
  async close(flush: () => Promise<void>): Promise<void> {
    try {
      await this.window.drained();
      await flush();
    } finally {
      clearInterval(this.ticker);
      this.options.progress?.update(this.progress());
      this.options.progress?.stop();
      await this.limiter.stop({ dropWaitingJobs: false });
      await this.client.close();
      await this.rejects.close();
    }
  }

  /**
   * Records how the run ended in `runs`: rows read and rejected, answers ok and refused by the
   * carrier, requests failed for good, requests sent, and the summary.
   */
  async finish(
    warehouse: Warehouse,
    finishedAt: number,
    counts: { read: number; rejected: number; ok: number; carrierErrors: number; failed: number; sent: number },
    exit: { exitCode: RunExitCode; exitState: string },
    summary: unknown,
  ): Promise<void> {
    await finishRun(warehouse, this.runId, {
      finishedAt: epochMsToInstant(finishedAt),
      counts: {
        codesRead: counts.read,
        codesRejected: counts.rejected,
        codesDuplicate: 0,
        codesToLookUp: counts.read - counts.rejected,
        lookedUpOk: counts.ok,
        carrierErrors: counts.carrierErrors,
        transportErrors: counts.failed,
        deferred: 0,
        lookupsSpent: counts.sent,
      },
      ...exit,
      summary,
    });
  }

  /** When the run started and ended (carrier date-times) and how long it took. */
  timing(finishedAt: number): { startedAt: string; finishedAt: string; durationMs: number } {
    return {
      startedAt: formatCarrierDateTime(this.startedAt),
      finishedAt: formatCarrierDateTime(finishedAt),
      durationMs: Math.round(performance.now() - this.startedClock),
    };
  }
}
