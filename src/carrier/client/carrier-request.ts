import type { Dispatcher, Pool } from 'undici';
import { HttpStatusFailure, RateLimitedFailure, retryAfterMsOf, transportFailure } from './lookup-failures.js';

/**
 * Sends one request to the carrier and reads its body as text: a 2xx answer's body, else the failure
 * (429 with its Retry-After, another status, a timeout or a connection failure). One call, one attempt.
 */
export async function carrierRequestText(pool: Pool, request: Dispatcher.RequestOptions, timeoutMs: number): Promise<string> {
  let statusCode: number;
  let body: string;
  let retryAfter: string | string[] | undefined;
  try {
    // undici's own header and body timeouts bound a hung request; no per-request timer or combined
    // AbortSignal, which cost more than the request itself at thousands per second.
    const answer = await pool.request({ ...request, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    statusCode = answer.statusCode;
    retryAfter = answer.headers['retry-after'];
    body = await answer.body.text();
  } catch (error) {
    throw transportFailure(error, timeoutMs);
  }
  if (statusCode === 429) throw new RateLimitedFailure(retryAfterMsOf(retryAfter));
  if (statusCode < 200 || statusCode >= 300) throw new HttpStatusFailure(statusCode);
  return body;
}
