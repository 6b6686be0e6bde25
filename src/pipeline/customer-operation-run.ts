import Bottleneck from 'bottleneck';
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import type { KeyRing } from '../carrier/client/key-ring.js';
import type { CustomerOperationsClientOptions } from '../carrier/client/customer-operations-client.js';
import { LookupFailure } from '../carrier/client/lookup-failures.js';
import { EXIT_CODE, type RunExitCode } from './exit-codes.js';
import { transientRetryOptions, type RetryPolicy } from './transient-retry.js';

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

/** Bottleneck holding the pace: at most `concurrency` in flight, starts spaced by 1/rate seconds. */
export function operationLimiter(pace: OperationPace): Bottleneck {
  return new Bottleneck({ maxConcurrent: pace.concurrency, minTime: Math.ceil(1000 / pace.requestsPerSecond) });
}

/** The answer of a request after its retries, or the failure that ended them. */
export type Asked<T> = { readonly ok: true; readonly value: T; readonly attempts: number } | { readonly ok: false; readonly failure: LookupFailure; readonly attempts: number };

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
export function operationExit(failed: number, stopped: boolean): { exitCode: RunExitCode; exitState: 'ok' | 'partial' | 'failed' } {
  if (failed > 0) return { exitCode: EXIT_CODE.FAILURE, exitState: 'failed' };
  if (stopped) return { exitCode: EXIT_CODE.PARTIAL, exitState: 'partial' };
  return { exitCode: EXIT_CODE.OK, exitState: 'ok' };
}
