import { isUtf8 } from 'node:buffer';
import type { Dispatcher, Pool } from 'undici';
import { HttpStatusFailure, RateLimitedFailure, retryAfterMsOf, transportFailure } from './lookup-failures.js';

/** A UTF-8 byte order mark, which a text decoder drops. */
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Sends one request to the carrier and reads its body as text: a 2xx answer's body, else the failure
 * (429 with its Retry-After, another status, a timeout or a connection failure). One call, one attempt.
 */
export async function carrierRequestText(
  pool: Pool,
  request: Dispatcher.RequestOptions,
  timeoutMs: number,
): Promise<string> {
  return (await carrierRequestBytes(pool, request, timeoutMs)).toString('utf8');
}

/**
 * carrierRequestText's body as its UTF-8 bytes (without a byte order mark), for a caller that also
 * writes them out as they came, without encoding them again. Bytes that are not UTF-8 come back as
 * the text decoder reads them (each bad sequence a U+FFFD), so the bytes and the text always agree.
 */
export async function carrierRequestBytes(
  pool: Pool,
  request: Dispatcher.RequestOptions,
  timeoutMs: number,
): Promise<Buffer> {
  let statusCode: number;
  let body: Buffer;
  let retryAfter: string | string[] | undefined;
  try {
    // undici's own header and body timeouts bound a hung request; a per-request timer or combined
    // AbortSignal would cost more than the request itself at a run's rate.
    const answer = await pool.request({ ...request, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    statusCode = answer.statusCode;
    retryAfter = answer.headers['retry-after'];
    body = Buffer.from(await answer.body.arrayBuffer());
  } catch (error) {
    throw transportFailure(error, timeoutMs);
  }
  if (statusCode === 429) throw new RateLimitedFailure(retryAfterMsOf(retryAfter));
  if (statusCode < 200 || statusCode >= 300) throw new HttpStatusFailure(statusCode);
  const text = body.subarray(0, 3).equals(UTF8_BOM) ? body.subarray(3) : body;
  return isUtf8(text) ? text : Buffer.from(text.toString('utf8'), 'utf8');
}
