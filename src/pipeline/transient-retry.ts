import type { Options as RetryOptions } from 'p-retry';
import { LookupFailure, RateLimitedFailure } from '../carriers/client/lookup-failures.js';

export interface RetryPolicy {
  /** Attempts per request, the first included. */
  readonly attempts: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * p-retry's options for the carrier's transient failures: exponential backoff with jitter while the
 * failure is a retryable LookupFailure (5xx, resets, timeouts, malformed bodies, 429 after its
 * Retry-After) and the run is not stopping.
 */
export function transientRetryOptions(
  retry: RetryPolicy,
  stopping: AbortSignal,
  onRetry?: (failure: LookupFailure, attempt: number) => void,
): RetryOptions {
  return {
    retries: retry.attempts - 1,
    minTimeout: retry.minDelayMs,
    maxTimeout: retry.maxDelayMs,
    factor: 2,
    randomize: true,
    shouldRetry: (error) => error instanceof LookupFailure && error.retryable && !stopping.aborted,
    onFailedAttempt: async (error) => {
      if (!(error instanceof LookupFailure) || error.retriesLeft === 0 || stopping.aborted) return;
      onRetry?.(error, error.attemptNumber);
      if (error instanceof RateLimitedFailure) await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs));
    },
  };
}
