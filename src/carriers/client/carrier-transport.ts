import type { Dispatcher, Pool } from 'undici';
import type { CarrierCall, CarrierRequest, CheckedAnswer } from '../carrier-tracking.js';
import type { PayloadCheck } from '../payload-validation.js';
import { carrierEndpoint, carrierRequestAnswer, carrierRequestBytes } from './carrier-request.js';
import { redactedJsonAnswer } from './key-redaction.js';
import type { KeyRing } from './key-ring.js';
import { MalformedAnswerFailure } from './lookup-failures.js';

/** A carrier's address and how each request to it is bounded. */
export interface TransportOptions {
  /** The carrier's base address: 247Express's `{tracking_url}`, GHN's `…/shiip/public-api`; its path is kept. */
  readonly trackingUrl: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read; a larger one fails the request with LOOKUP_TOO_LARGE. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to the carrier. */
  readonly connections: number;
}

/**
 * The requests a carrier's contract declares, sent over keep-alive HTTP (undici): every configured
 * key cleared out of each answer before anything reads it, an answer the contract refuses a
 * MalformedAnswerFailure. Each request is one attempt: retries are the pipeline's, because every
 * attempt passes through the quota first.
 */
export class CarrierTransport {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(
    private readonly options: TransportOptions,
    /** Every configured key, cleared out of each answer. */
    private readonly keys: KeyRing,
  ) {
    const { pool, basePath } = carrierEndpoint(options.trackingUrl, options.connections);
    this.pool = pool;
    this.basePath = basePath;
  }

  /** The call a contract sends its requests through, each aborted by `signal`. */
  call(signal?: AbortSignal): CarrierCall {
    return (request, check) => this.send(request, check, signal);
  }

  private async send<T>(
    request: CarrierRequest,
    check: (decoded: unknown) => PayloadCheck<T>,
    signal: AbortSignal | undefined,
  ): Promise<CheckedAnswer<T>> {
    const httpRequest: Dispatcher.RequestOptions = {
      method: request.method,
      path: `${this.basePath}${request.path}`,
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
      ...(signal ? { signal } : {}),
    };
    const received = request.clientErrorsAnswer
      ? (await carrierRequestAnswer(this.pool, httpRequest, this.options)).body
      : await carrierRequestBytes(this.pool, httpRequest, this.options);
    const { decoded, body } = redactedJsonAnswer(received, this.keys);
    const checked = check(decoded);
    if (!checked.ok) throw new MalformedAnswerFailure(checked.message);
    return { value: checked.value, decoded, body };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
