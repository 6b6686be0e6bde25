import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { buildConnector, type Dispatcher, Pool } from 'undici';
import {
  AnswerTooLargeFailure,
  HttpStatusFailure,
  LookupFailure,
  RateLimitedFailure,
  retryAfterMsOf,
  transportFailure,
} from './lookup-failures.js';

/** A UTF-8 byte order mark, which a text decoder drops. */
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Errors of connections that were never made: no request was written on them. */
const connectFailures = new WeakSet<Error>();

/**
 * Keep-alive connections to the carrier, one request at a time on each. undici hands a request the
 * error of a connection that could not be made (refused, DNS, TLS handshake, connect timeout) as it
 * came from the connector; marking those here tells them apart from failures after a request was
 * written, whatever their code (ECONNRESET can be either).
 */
function carrierPool(origin: string, connections: number): Pool {
  const connector = buildConnector({});
  return new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: (options, callback) =>
      connector(options, (...args) => {
        if (args[0] !== null) connectFailures.add(args[0]);
        callback(...args);
      }),
  });
}

/** A carrier's address as a client uses it: a pool of its origin, and its path without a trailing slash. */
export interface CarrierEndpoint {
  readonly pool: Pool;
  readonly basePath: string;
}

/** The endpoint of a carrier's address (`https://host/base/`), with `connections` keep-alive connections. */
export function carrierEndpoint(address: string, connections: number): CarrierEndpoint {
  const url = new URL(address);
  return { pool: carrierPool(url.origin, connections), basePath: url.pathname.replace(/\/$/, '') };
}

/** How one request to the carrier is bounded: its time, and the size of the body read. */
export interface AnswerLimits {
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
}

/**
 * The whole body, or AnswerTooLargeFailure as soon as it is known to pass the limit: from its
 * Content-Length before any byte is read, else from the bytes counted as they stream. Destroying the
 * body aborts the request, so the rest is never received, let alone kept.
 */
async function bodyWithin(
  body: Readable,
  contentLength: string | string[] | undefined,
  maxBytes: number,
): Promise<Buffer> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > maxBytes) {
    // Destroying the body emits its abort as an error; nothing waits for it.
    body.on('error', () => {});
    body.destroy();
    throw new AnswerTooLargeFailure(maxBytes);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  // Leaving the loop early destroys the body.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > maxBytes) throw new AnswerTooLargeFailure(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

/**
 * Sends one request to the carrier and reads its body: a 2xx answer's body, else the failure (429
 * with its Retry-After, another status, a body over the limit, a timeout or a connection failure).
 * One call, one attempt. The body comes as its UTF-8 bytes (without a byte order mark), for a caller
 * that also writes them out as they came, without encoding them again. Bytes that are not UTF-8 come back as
 * the text decoder reads them (each bad sequence a U+FFFD), so the bytes and the text always agree.
 */
export async function carrierRequestBytes(
  pool: Pool,
  request: Dispatcher.RequestOptions,
  limits: AnswerLimits,
): Promise<Buffer> {
  return (await carrierRequest(pool, request, limits, false)).body;
}

/** An answer with its HTTP status: a 2xx, or a 4xx other than 429 whose body is the carrier's error. */
export interface CarrierAnswer {
  readonly statusCode: number;
  readonly body: Buffer;
}

/**
 * Like carrierRequestBytes, for a carrier that answers its errors with a 4xx status and a body that
 * says what is wrong (GHN): such a body is read as an answer. 429 and 5xx stay failures.
 */
export async function carrierRequestAnswer(
  pool: Pool,
  request: Dispatcher.RequestOptions,
  limits: AnswerLimits,
): Promise<CarrierAnswer> {
  return carrierRequest(pool, request, limits, true);
}

async function carrierRequest(
  pool: Pool,
  request: Dispatcher.RequestOptions,
  { timeoutMs, maxAnswerBytes }: AnswerLimits,
  clientErrorsAnswer: boolean,
): Promise<CarrierAnswer> {
  let body: Buffer;
  let statusCode: number;
  try {
    // undici's own header and body timeouts bound a hung request; a per-request timer or combined
    // AbortSignal would cost more than the request itself at a run's rate.
    const answer = await pool.request({ ...request, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    statusCode = answer.statusCode;
    const isAnswer =
      (statusCode >= 200 && statusCode < 300) ||
      (clientErrorsAnswer && statusCode >= 400 && statusCode < 500 && statusCode !== 429);
    if (!isAnswer) {
      // A failed answer's body is not read: dump keeps the connection when it is small, else closes it.
      await answer.body.dump();
      if (statusCode === 429) throw new RateLimitedFailure(retryAfterMsOf(answer.headers['retry-after']));
      throw new HttpStatusFailure(statusCode);
    }
    body = await bodyWithin(answer.body, answer.headers['content-length'], maxAnswerBytes);
  } catch (error) {
    if (error instanceof LookupFailure) throw error;
    throw transportFailure(error, timeoutMs, !(error instanceof Error && connectFailures.has(error)));
  }
  const text = body.subarray(0, 3).equals(UTF8_BOM) ? body.subarray(3) : body;
  return { statusCode, body: isUtf8(text) ? text : Buffer.from(text.toString('utf8'), 'utf8') };
}
