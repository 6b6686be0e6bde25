import type { Pool } from 'undici';
import { answerBodyAsRead } from '../../answer-body.js';
import { carrierEndpoint, carrierRequestBytes } from '../../client/carrier-request.js';
import { redactedJsonAnswer } from '../../client/key-redaction.js';
import type { KeyRing } from '../../client/key-ring.js';
import { MalformedAnswerFailure } from '../../client/lookup-failures.js';
import { checkTrackingResult, OPERATION_PATHS, type TrackingError, type TrackingSnapshot } from '../contract.js';

export interface TrackingClientOptions {
  /** `{tracking_url}` of the carrier's interface, e.g. `https://tracking.example.vn` (a path prefix is kept). */
  readonly trackingUrl: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read; a larger one fails the lookup with LOOKUP_TOO_LARGE. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to the carrier. */
  readonly connections: number;
}

/**
 * One answered lookup: the raw body as it came (its UTF-8 bytes, for the spool; every configured key
 * in it cleared) and what it means.
 */
export type TrackingAnswer =
  | { readonly kind: 'snapshot'; readonly snapshot: TrackingSnapshot; readonly body: Buffer }
  | { readonly kind: 'carrier_error'; readonly error: TrackingError; readonly body: Buffer };

/**
 * The carrier's tracking lookup over keep-alive HTTP (undici). One call is one request, one attempt:
 * retries are the pipeline's, because every attempt must pass through the quota first.
 */
export class TrackingClient {
  private readonly pool: Pool;
  private readonly path: string;

  constructor(
    private readonly options: TrackingClientOptions,
    /** Every configured key, cleared out of each answer before anything reads it. */
    private readonly keys: KeyRing,
  ) {
    const { pool, basePath } = carrierEndpoint(options.trackingUrl, options.connections);
    this.pool = pool;
    this.path = `${basePath}${OPERATION_PATHS.tracking}`;
  }

  /** Looks one order code up; throws a LookupFailure when no usable answer came back. */
  async lookup(apiKey: string, orderCode: string, signal?: AbortSignal): Promise<TrackingAnswer> {
    const query = new URLSearchParams({ apiKey, ordercode: orderCode });
    const received = await carrierRequestBytes(
      this.pool,
      { method: 'GET', path: `${this.path}?${query.toString()}`, ...(signal ? { signal } : {}) },
      this.options,
    );
    const { decoded, body } = redactedJsonAnswer(received, this.keys);
    const checked = checkTrackingResult(decoded);
    if (!checked.ok) throw new MalformedAnswerFailure(checked.message);
    const result = checked.value;
    return result.kind === 'snapshot'
      ? { kind: 'snapshot', snapshot: result.snapshot, body: answerBodyAsRead(body, decoded) }
      : { kind: 'carrier_error', error: result.error, body };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
