import pRetry from 'p-retry';
import type { Logger } from 'pino';
import { carrierDayOf } from '../carriers/carrier-time.js';
import type { CarrierAccount, CarrierCall } from '../carriers/carrier-tracking.js';
import { CarrierTransport } from '../carriers/client/carrier-transport.js';
import type { KeyRing } from '../carriers/client/key-ring.js';
import { HttpStatusFailure, LookupFailure } from '../carriers/client/lookup-failures.js';
import { type PaceLimiter, paceLimiter } from '../quota/operation-pace.js';
import type { OperationPace } from '../quota/operation-pace-default.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { DispatchWindow } from './dispatch-window.js';
import { RejectsFile } from './rejects-file.js';
import {
  type ProgressListener,
  type RunExitCodes,
  type RunExitState,
  RunLifecycle,
  RunStop,
  runStartTime,
  showProgress,
} from './run-lifecycle.js';
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

/** Where a carrier's customer operations are asked, and how each request is bounded. */
export interface OperationClientOptions {
  /** The carrier's base address of its customer operations, e.g. `https://api.example.vn` (a path prefix is kept). */
  readonly baseUrl: string;
  /** The header the account's API key travels in, where the carrier does not document it. */
  readonly authHeader: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read; a larger one fails the request with LOOKUP_TOO_LARGE. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to the carrier. */
  readonly connections: number;
}

/** What the price and images runs share. */
export interface CustomerRunOptions {
  readonly job: string;
  /** The carrier asked, by its id: every row the run writes is its. */
  readonly carrier: string;
  readonly keys: KeyRing;
  readonly client: OperationClientOptions;
  readonly pace: OperationPace;
  readonly retry: RetryPolicy;
  /** Where the run's spool and rejects file go. */
  readonly dataDir: string;
  /** Results committed per warehouse transaction. */
  readonly batchSize: number;
  readonly now: () => number;
  readonly logger: Logger;
  readonly progress?: ProgressListener<OperationProgress> | undefined;
  /** Aborted to stop the run: no new requests; those in flight finish. */
  readonly stop?: AbortSignal | undefined;
  /** The exit code of each way the run can end, as the command line defines them. */
  readonly exitCodes: RunExitCodes;
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

/** The answer of a request after its retries, or the failure that ended them. */
export type Asked<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: number }
  | { readonly ok: false; readonly failure: LookupFailure; readonly attempts: number };

/**
 * Sends one request through the limiter, each attempt waiting its turn, retrying transient failures
 * (5xx, resets, timeouts, malformed answers, 429 after its Retry-After) with backoff and jitter.
 */
async function askWithRetry<T>(
  limiter: PaceLimiter,
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

/** What `ask` gives for an order whose key the carrier refused earlier in the run: nothing was sent. */
export const KEY_REFUSED = Symbol('key refused');

/** The error code an order not asked because the carrier refused its key is recorded with. */
export const KEY_NOT_FOUND = 'KEY_NOT_FOUND';

/** HTTP statuses with which the carrier refuses the API key itself, whatever the order. */
function refusesKey(failure: LookupFailure): failure is HttpStatusFailure {
  return failure instanceof HttpStatusFailure && (failure.status === 401 || failure.status === 403);
}

/**
 * A run failed when a request failed after every retry or the carrier refused a key (which needs the
 * operator); it is partial when stopped; carrier refusals of one request are results.
 */
export function operationExitState(failed: number, keysRefused: boolean, stopped: boolean): RunExitState {
  if (failed > 0 || keysRefused) return 'failed';
  if (stopped) return 'partial';
  return 'ok';
}

/** What a price or images run counts, as its `runs` row keeps it. */
export interface OperationCounts {
  readonly read: number;
  readonly rejected: number;
  readonly ok: number;
  readonly carrierErrors: number;
  readonly failed: number;
  /** Orders left for the next run without a request. */
  readonly deferred: number;
  readonly sent: number;
}

/**
 * What a price or images run holds while it runs, beside its lifecycle: the rejects file, the
 * transport its carrier's requests go through, the limiter holding the pace, and the window bounding
 * requests in flight.
 */
export class CustomerOperationRun {
  readonly rejects: RejectsFile;
  readonly log: Logger;
  /** What the carrier's operation sends its requests through; those in flight finish when the run stops. */
  readonly call: CarrierCall;
  readonly limiter: PaceLimiter;
  private readonly transport: CarrierTransport;
  private readonly stop: RunStop;
  private readonly window: DispatchWindow;
  /** Aliases whose API key the carrier refused: no more requests with them in this run. */
  private readonly refusedKeys = new Set<string>();
  private hideProgress: () => void = () => undefined;

  private constructor(
    private readonly options: CustomerRunOptions,
    private readonly lifecycle: RunLifecycle,
    private readonly progress: () => OperationProgress,
  ) {
    this.rejects = new RejectsFile(lifecycle.rejectsPath);
    this.log = options.logger.child({ runId: lifecycle.runId });
    const { baseUrl, authHeader, timeoutMs, maxAnswerBytes, connections } = options.client;
    this.transport = new CarrierTransport(
      { trackingUrl: baseUrl, keyHeader: authHeader, timeoutMs, maxAnswerBytes, connections },
      options.keys,
    );
    this.call = this.transport.call();
    this.limiter = paceLimiter(options.pace);
    this.stop = new RunStop({ signals: [options.stop] });
    this.window = new DispatchWindow(options.pace.concurrency * 2);
  }

  /** Starts the run: its row in `runs`, and the log line saying so. */
  static async start(
    options: CustomerRunOptions,
    warehouse: Warehouse,
    source: string,
    progress: () => OperationProgress,
  ): Promise<CustomerOperationRun> {
    const startedAt = runStartTime(options.now);
    const lifecycle = await RunLifecycle.start({
      warehouse,
      job: options.job,
      source,
      carrierDay: carrierDayOf(startedAt.epochMs),
      startedAt,
      dataDir: options.dataDir,
      exitCodes: options.exitCodes,
    });
    const run = new CustomerOperationRun(options, lifecycle, progress);
    run.log.info({ job: options.job, source, keys: options.keys.aliases, pace: options.pace }, 'run started');
    return run;
  }

  get runId(): string {
    return this.lifecycle.runId;
  }

  get spoolDir(): string {
    return this.lifecycle.scratchDir;
  }

  /** Aborted once a stop is requested: no new request starts. */
  get stopping(): AbortSignal {
    return this.stop.stopping;
  }

  /** Starts the progress display. */
  showProgress(): void {
    this.hideProgress = showProgress(this.options.progress, this.progress);
  }

  /** The account of an alias, as the carrier's operation is given it. */
  account(alias: string): CarrierAccount {
    return this.options.keys.accountOf(alias);
  }

  /** True once the carrier refused a key in this run. */
  get keysRefused(): boolean {
    return this.refusedKeys.size > 0;
  }

  /**
   * Asks the carrier with the alias's key, retrying transient failures, unless the carrier refused
   * that key earlier in the run (then nothing is sent, even from the requests already waiting). A
   * refusal of the key stops it, with a warning naming the alias.
   */
  async ask<T>(
    alias: string,
    send: () => Promise<T>,
    onRetry: (failure: LookupFailure, attempt: number) => void,
  ): Promise<Asked<T> | typeof KEY_REFUSED> {
    if (this.refusedKeys.has(alias)) return KEY_REFUSED;
    const asked = await askWithRetry<T | typeof KEY_REFUSED>(
      this.limiter,
      () => (this.refusedKeys.has(alias) ? Promise.resolve(KEY_REFUSED) : send()),
      this.options.retry,
      this.stopping,
      onRetry,
    );
    if (asked.ok && asked.value === KEY_REFUSED) return KEY_REFUSED;
    if (!asked.ok && refusesKey(asked.failure) && !this.refusedKeys.has(alias)) {
      this.refusedKeys.add(alias);
      this.log.warn(
        { account: alias, status: asked.failure.status },
        "the carrier refused this account's API key: no more requests with it",
      );
    }
    return asked as Asked<T>;
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

  /** Waits for the requests in flight, commits the last batch, and closes the transport, limiter and rejects file. */
  async close(flush: () => Promise<void>): Promise<void> {
    try {
      await this.window.drained();
      await flush();
    } finally {
      this.stop.dispose();
      this.hideProgress();
      await this.limiter.stop();
      await this.transport.close();
      await this.rejects.close();
    }
  }

  /**
   * Records how the run ended in `runs` (rows read and rejected, answers ok and refused by the
   * carrier, requests failed for good, requests sent, and the summary) and removes its scratch folder.
   */
  finish(finishedAt: number, counts: OperationCounts, exitState: RunExitState, summary: unknown): Promise<void> {
    return this.lifecycle.finish(finishedAt, {
      counts: {
        codesRead: counts.read,
        codesRejected: counts.rejected,
        codesDuplicate: 0,
        codesToLookUp: counts.read - counts.rejected,
        lookedUpOk: counts.ok,
        carrierErrors: counts.carrierErrors,
        transportErrors: counts.failed,
        deferred: counts.deferred,
        lookupsSpent: counts.sent,
      },
      exitState,
      summary,
    });
  }

  exitCodeOf(state: RunExitState): number {
    return this.lifecycle.exitCodeOf(state);
  }

  timing(finishedAt: number): { startedAt: string; finishedAt: string; durationMs: number } {
    return this.lifecycle.timing(finishedAt);
  }
}
