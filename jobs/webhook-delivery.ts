import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { request } from 'undici';
import { retryAfterMsOf } from '../src/carriers/client/lookup-failures.js';

/** How hard a delivery tries: retries after the first attempt, all of it within `timeoutMs`. */
export interface DeliveryPolicy {
  readonly retries: number;
  readonly timeoutMs: number;
  /** The backoff between attempts, doubling from the first delay up to the last (default 500 ms to 5 s). */
  readonly backoff?: { readonly minDelayMs: number; readonly maxDelayMs: number } | undefined;
}

const DEFAULT_BACKOFF = { minDelayMs: 500, maxDelayMs: 5_000 } as const;

/** How a delivery ended; `reason` names a status or an error code, never the URL. */
export type DeliveryOutcome =
  | { readonly delivered: true; readonly attempts: number }
  | { readonly delivered: false; readonly attempts: number; readonly reason: string };

/** One attempt's failure; `retryAfterMs` is the receiver's own Retry-After when it asked to slow down. */
class AttemptFailure extends Error {
  constructor(
    readonly reason: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(reason);
  }
}

/** A single attempt never waits longer than this for an answer, so a hung receiver leaves time to retry. */
const ATTEMPT_TIMEOUT_MS = 10_000;

function failureOf(error: unknown, deadline: AbortSignal, timeoutMs: number): AttemptFailure {
  if (error instanceof AttemptFailure) return error;
  if (deadline.aborted) return new AttemptFailure(`no answer within ${timeoutMs} ms`, false);
  // Only the error's code or class name: a message or its cause could quote the URL and its token.
  const code = (error as { code?: unknown }).code;
  return new AttemptFailure(typeof code === 'string' ? code : error instanceof Error ? error.name : 'error', true);
}

async function attempt(url: string, body: string, deadline: AbortSignal): Promise<void> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    headersTimeout: ATTEMPT_TIMEOUT_MS,
    bodyTimeout: ATTEMPT_TIMEOUT_MS,
    signal: deadline,
  });
  await response.body.dump();
  const status = response.statusCode;
  if (status < 300) return;
  // Only a receiver that is overloaded or failing may answer differently later; another refusal stays one.
  const retryable = status === 408 || status === 429 || status >= 500;
  const retryAfter = status === 429 || status === 503 ? retryAfterMsOf(response.headers['retry-after']) : undefined;
  throw new AttemptFailure(`HTTP ${status}`, retryable, retryAfter);
}

/**
 * POSTs a JSON body with p-retry: backoff after a connection failure, a timeout, 408, 429 or a 5xx
 * (waiting out a Retry-After that fits in the time left), no retry after another status. Everything,
 * waits included, ends within `timeoutMs`, so a receiver that is down never holds its caller long.
 */
export async function deliverJson(url: string, body: unknown, policy: DeliveryPolicy): Promise<DeliveryOutcome> {
  const text = JSON.stringify(body);
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const endsAt = Date.now() + policy.timeoutMs;
  const worthRetrying = (error: unknown): error is AttemptFailure =>
    error instanceof AttemptFailure &&
    error.retryable &&
    (error.retryAfterMs === undefined || Date.now() + error.retryAfterMs < endsAt);
  let attempts = 0;
  let last: AttemptFailure | undefined;
  try {
    await pRetry(
      async () => {
        attempts++;
        last = undefined;
        try {
          await attempt(url, text, deadline);
        } catch (error) {
          last = failureOf(error, deadline, policy.timeoutMs);
          throw last;
        }
      },
      {
        retries: policy.retries,
        minTimeout: (policy.backoff ?? DEFAULT_BACKOFF).minDelayMs,
        maxTimeout: (policy.backoff ?? DEFAULT_BACKOFF).maxDelayMs,
        factor: 2,
        randomize: true,
        signal: deadline,
        shouldRetry: worthRetrying,
        onFailedAttempt: async (error) => {
          if (worthRetrying(error) && error.retryAfterMs !== undefined && error.retriesLeft > 0)
            await sleep(error.retryAfterMs, undefined, { signal: deadline });
        },
      },
    );
    return { delivered: true, attempts };
  } catch {
    // The time bound can end the retries before the attempt in flight has failed: then it had no answer.
    const reason = last?.reason ?? `no answer within ${policy.timeoutMs} ms`;
    return {
      delivered: false,
      attempts,
      reason: deadline.aborted && last?.retryable ? `${reason}, then out of time (${policy.timeoutMs} ms)` : reason,
    };
  }
}
