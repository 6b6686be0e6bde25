import pRetry, { AbortError } from 'p-retry';
import type { TrackerAnswer } from '../../carriers/carrier-tracking.js';
import type { CarrierTracker } from '../../carriers/client/carrier-tracker.js';
import { CarrierExceptionFailure, LookupFailure } from '../../carriers/client/lookup-failures.js';
import { isLimiterRefusal, type LookupLimiter, QUOTA_REFUSED, type SpentReason } from '../../quota/lookup-limiter.js';
import type { QuotaLedger } from '../../quota/quota-ledger.js';
import { RedisUnavailableError } from '../../quota/redis-connection.js';
import { type CarrierBreaker, CarrierDownError } from '../carrier-breaker.js';
import { type RetryPolicy, transientRetryOptions } from '../transient-retry.js';

/** Why an order was left for a later run; `carrier_down`: the run's circuit breaker tripped. */
export type DeferReason = SpentReason | 'key_limit' | 'stopping' | 'carrier_down';

/** What became of one order's lookup. */
export type OrderOutcome =
  /** A snapshot the contract accepted: the order code it names, and its body as it came (which the loader reads). */
  | { readonly kind: 'ok'; readonly orderCode: string; readonly body: Buffer; readonly attempts: number }
  | {
      readonly kind: 'carrier_error';
      readonly errorCode: string;
      readonly errorMessage: string | null;
      readonly body: Buffer;
      readonly attempts: number;
    }
  | {
      readonly kind: 'transport_error';
      readonly errorCode: string;
      readonly errorMessage: string;
      readonly attempts: number;
    }
  | { readonly kind: 'deferred'; readonly reason: DeferReason; readonly attempts: number };

export interface OrderLookupContext {
  readonly tracker: CarrierTracker;
  readonly limiter: LookupLimiter;
  readonly ledger: QuotaLedger;
  readonly retry: RetryPolicy;
  /** Watches every attempt; once it trips, nothing more is sent. */
  readonly breaker: CarrierBreaker;
  /** Aborted when the run is told to stop, or its breaker trips: no new attempt starts. */
  readonly stopping: AbortSignal;
  /** Aborted when in-flight requests are abandoned. */
  readonly abandon: AbortSignal;
  readonly onRetry?: (orderCode: string, failure: LookupFailure, attempt: number) => void;
  /** A carrier error answer that is not the order's outcome (retried, or a spent key): kept in the raw spool. */
  readonly onPassedAnswer?: (orderCode: string, alias: string, body: Buffer) => void;
}

/** The body of an outcome that has no answer of its own (a transient carrier error after the last attempt). */
const NO_BODY = Buffer.alloc(0);

/** Ends an order's attempts without a result; p-retry hands it back through its AbortError. */
class Deferred extends Error {
  constructor(readonly reason: DeferReason) {
    super(`deferred: ${reason}`);
  }
}

function defer(reason: DeferReason): AbortError {
  return new AbortError(new Deferred(reason));
}

/** Why orders are left once the run stops: its breaker tripped, or it was told to stop. */
export function stopReason(context: Pick<OrderLookupContext, 'breaker'>): DeferReason {
  return context.breaker.tripped ? 'carrier_down' : 'stopping';
}

/**
 * One attempt, sent once the breaker lets it. The ledger counted it before; an attempt that never
 * reached the carrier (no connection, or the breaker tripped first) is given back to the quota.
 */
async function sendAttempt(
  context: OrderLookupContext,
  alias: string,
  orderCode: string,
  onSend: () => void,
): Promise<TrackerAnswer> {
  const { tracker, limiter, ledger, breaker, abandon } = context;
  const day = ledger.carrierDay;
  try {
    return await breaker.send(() => {
      onSend();
      return tracker.lookup(alias, orderCode, abandon);
    }, abandon);
  } catch (error) {
    if (error instanceof CarrierDownError || (error instanceof LookupFailure && !error.sent))
      await limiter.giveBackUnsent(alias, day);
    throw error;
  }
}

/**
 * Looks one order up: each attempt waits for the quota limiter, is counted by the ledger before it is
 * sent (and given back if it never reached the carrier), and failed attempts are retried with exponential backoff and jitter (p-retry) while the
 * failure is transient (the carrier's own transient errors such as 247Express's EXCEPTION, 5xx, 429 after its
 * Retry-After, resets, timeouts, malformed bodies). Other carrier answers are final. A spent key
 * (247Express's APIKEY_LIMIT) stops the key for the carrier day, a refused key for the run.
 */
export async function lookUpOrder(
  context: OrderLookupContext,
  orderCode: string,
  alias: string,
): Promise<OrderOutcome> {
  const { limiter, ledger, retry, stopping, abandon, breaker } = context;
  let attempts = 0;
  try {
    const answer: TrackerAnswer = await pRetry(
      async () => {
        if (stopping.aborted) throw defer(stopReason(context));
        const result = await limiter.schedule(alias, () => sendAttempt(context, alias, orderCode, () => attempts++));
        if (result === QUOTA_REFUSED) throw defer(limiter.spentReason(alias));
        if (result.kind === 'carrier_error') {
          switch (result.effect) {
            case 'key_limit':
              context.onPassedAnswer?.(orderCode, alias, result.body);
              await ledger.exhaust(alias);
              await limiter.refreshReservoirs();
              throw defer('key_limit');
            case 'key_refused':
              // Every lookup with this key would get the same answer: none more is sent.
              limiter.refuseKey(alias);
              throw defer('key_not_found');
            case 'retry':
              context.onPassedAnswer?.(orderCode, alias, result.body);
              throw new CarrierExceptionFailure(result.errorCode, result.errorMessage);
            case 'final':
              break;
          }
        }
        return result;
      },
      transientRetryOptions(retry, stopping, (failure, attempt) => context.onRetry?.(orderCode, failure, attempt)),
    );
    if (answer.kind === 'snapshot') return { kind: 'ok', orderCode: answer.orderCode, body: answer.body, attempts };
    return {
      kind: 'carrier_error',
      errorCode: answer.errorCode,
      errorMessage: answer.errorMessage,
      body: answer.body,
      attempts,
    };
  } catch (error) {
    if (error instanceof Deferred) return { kind: 'deferred', reason: error.reason, attempts };
    // Stopped while waiting for the limiter (whose jobs then reject), or abandoned in flight: looked up again by the next run.
    // Redis gone: the shared quota is in doubt, so the order waits for the next run.
    // The breaker tripped before this order's attempts were done: it waits for the carrier to come back.
    if (
      abandon.aborted ||
      (stopping.aborted && !(error instanceof LookupFailure)) ||
      isLimiterRefusal(error) ||
      error instanceof RedisUnavailableError ||
      (breaker.tripped && error instanceof LookupFailure && error.retryable && attempts < retry.attempts)
    ) {
      return { kind: 'deferred', reason: stopReason(context), attempts };
    }
    if (error instanceof CarrierExceptionFailure) {
      return {
        kind: 'carrier_error',
        errorCode: error.carrierErrorCode,
        errorMessage: error.message,
        body: NO_BODY,
        attempts,
      };
    }
    if (error instanceof LookupFailure)
      return { kind: 'transport_error', errorCode: error.code, errorMessage: error.message, attempts };
    throw error;
  }
}
