import { errors as undiciErrors } from 'undici';
import { type ErrorCode, ProductError } from '../../errors/product-error.js';

/**
 * Why one request to the carrier failed, with a stable code: the retry policy reads `retryable`,
 * the warehouse stores `code`, the operator reads the message. Carrier error codes (errorCode in the
 * answer) are data, not failures of this kind. Messages never carry the request's URL (it holds the key).
 */
export abstract class LookupFailure extends ProductError {
  declare readonly code: LookupFailureCode;
  readonly retryable: boolean = true;
  /** Whether the request was written: one that never reached the carrier (no connection) spends nothing. */
  readonly sent: boolean = true;
  /**
   * Whether the carrier answered, however unusable the answer: refused, reset and timed-out requests
   * and 5xx answers did not, and tell of an outage.
   */
  readonly answered: boolean = true;

  constructor(code: LookupFailureCode, message: string) {
    super(code, message);
  }
}

type LookupFailureCode = Extract<
  ErrorCode,
  | 'LOOKUP_TIMEOUT'
  | 'LOOKUP_CONNECTION'
  | 'LOOKUP_HTTP_STATUS'
  | 'LOOKUP_RATE_LIMITED'
  | 'LOOKUP_MALFORMED'
  | 'LOOKUP_TOO_LARGE'
  | 'EXCEPTION'
>;

export class LookupTimeoutFailure extends LookupFailure {
  override readonly answered = false;
  constructor(timeoutMs: number) {
    super('LOOKUP_TIMEOUT', `the carrier did not answer within ${timeoutMs} ms`);
  }
}

export class ConnectionFailure extends LookupFailure {
  override readonly answered = false;
  /**
   * `sent` false: the connection was never made (refused, DNS, TLS handshake, connect timeout), so no
   * request was written; true: it broke once a request was written, which the carrier may have counted.
   */
  constructor(
    cause: string,
    override readonly sent = true,
  ) {
    super(
      'LOOKUP_CONNECTION',
      `${sent ? 'connection to the carrier failed' : 'could not connect to the carrier'}: ${cause}`,
    );
  }
}

export class HttpStatusFailure extends LookupFailure {
  override readonly retryable: boolean;
  override readonly answered: boolean;
  constructor(readonly status: number) {
    super('LOOKUP_HTTP_STATUS', `the carrier answered HTTP ${status}`);
    // 5xx and 408 can pass; another 4xx will not change by asking again.
    this.retryable = status >= 500 || status === 408;
    this.answered = status < 500;
  }
}

export class RateLimitedFailure extends LookupFailure {
  constructor(readonly retryAfterMs: number) {
    super('LOOKUP_RATE_LIMITED', `the carrier answered HTTP 429 (retry after ${retryAfterMs} ms)`);
  }
}

export class MalformedAnswerFailure extends LookupFailure {
  constructor(detail: string) {
    super('LOOKUP_MALFORMED', `the carrier's answer is malformed: ${detail}`);
  }
}

/**
 * The answer's body passed the size limit and was not read further. Not retried: the same endpoint
 * answers the same way again, and each attempt would spend quota on a body that is thrown away.
 */
export class AnswerTooLargeFailure extends LookupFailure {
  override readonly retryable = false;
  constructor(readonly maxBytes: number) {
    super('LOOKUP_TOO_LARGE', `the carrier's answer is over ${maxBytes} bytes`);
  }
}

/** The carrier answered its own transient failure (247Express's errorCode EXCEPTION), under its code. */
export class CarrierExceptionFailure extends LookupFailure {
  constructor(
    readonly carrierErrorCode: string,
    message: string | null,
  ) {
    super('EXCEPTION', `the carrier answered ${carrierErrorCode}${message ? `: ${message}` : ''}`);
  }
}

const RETRY_AFTER_DEFAULT_MS = 1_000;

/** A 429's Retry-After (seconds or an HTTP date) in milliseconds; 1 s when absent or unreadable. */
export function retryAfterMsOf(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return RETRY_AFTER_DEFAULT_MS;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? RETRY_AFTER_DEFAULT_MS : Math.max(0, date - Date.now());
}

/**
 * The failure for an error undici threw: a timeout, or a connection failure named by its code;
 * `sent` false when the error is the connection's own, made before any request was written on it.
 */
export function transportFailure(error: unknown, timeoutMs: number, sent = true): LookupFailure {
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new LookupTimeoutFailure(timeoutMs);
  }
  const code = (error as { code?: string }).code;
  // Only the error's code and class name: undici's messages are safe, but a cause could quote the URL.
  return new ConnectionFailure(code ?? (error instanceof Error ? error.name : 'unknown error'), sent);
}
