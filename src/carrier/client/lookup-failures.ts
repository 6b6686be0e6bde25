import { errors as undiciErrors } from 'undici';

/**
 * Why one request to the carrier failed, with a stable code: the retry policy reads `retryable`,
 * the warehouse stores `code`, the operator reads the message. Carrier error codes (errorCode in the
 * answer) are data, not failures of this kind. Messages never carry the request's URL (it holds the key).
 */
export class LookupFailure extends Error {
  readonly code: string = 'LOOKUP_FAILURE';
  readonly retryable: boolean = true;
}

export class LookupTimeoutFailure extends LookupFailure {
  override readonly code = 'LOOKUP_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`the carrier did not answer within ${timeoutMs} ms`);
  }
}

export class ConnectionFailure extends LookupFailure {
  override readonly code = 'LOOKUP_CONNECTION';
  constructor(cause: string) {
    super(`connection to the carrier failed: ${cause}`);
  }
}

export class HttpStatusFailure extends LookupFailure {
  override readonly code = 'LOOKUP_HTTP_STATUS';
  override readonly retryable: boolean;
  constructor(readonly status: number) {
    super(`the carrier answered HTTP ${status}`);
    // 5xx and 408 can pass; another 4xx will not change by asking again.
    this.retryable = status >= 500 || status === 408;
  }
}

export class RateLimitedFailure extends LookupFailure {
  override readonly code = 'LOOKUP_RATE_LIMITED';
  constructor(readonly retryAfterMs: number) {
    super(`the carrier answered HTTP 429 (retry after ${retryAfterMs} ms)`);
  }
}

export class MalformedAnswerFailure extends LookupFailure {
  override readonly code = 'LOOKUP_MALFORMED';
  constructor(detail: string) {
    super(`the carrier's answer is malformed: ${detail}`);
  }
}

/** The carrier answered errorCode EXCEPTION: its own transient failure. */
export class CarrierExceptionFailure extends LookupFailure {
  override readonly code = 'EXCEPTION';
  constructor(message: string | null) {
    super(`the carrier answered EXCEPTION${message ? `: ${message}` : ''}`);
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

/** The failure for an error undici threw: a timeout, or a connection failure named by its code. */
export function transportFailure(error: unknown, timeoutMs: number): LookupFailure {
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new LookupTimeoutFailure(timeoutMs);
  }
  const code = (error as { code?: string }).code;
  // Only the error's code and class name: undici's messages are safe, but a cause could quote the URL.
  return new ConnectionFailure(code ?? (error instanceof Error ? error.name : 'unknown error'));
}
