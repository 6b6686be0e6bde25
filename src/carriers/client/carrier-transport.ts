import type { Dispatcher, Pool } from 'undici';
import type { CarrierCall, CarrierRequest, CheckedAnswer } from '../carrier-tracking.js';
import type { PayloadCheck } from '../payload-validation.js';
import { carrierEndpoint, carrierRequestAnswer, carrierRequestBytes } from './carrier-request.js';
import { redactedJsonAnswer } from './key-redaction.js';
import type { KeyRing } from './key-ring.js';
import { MalformedAnswerFailure } from './lookup-failures.js';

/** A carrier's address and how each request to it is bounded. */
export interface TransportOptions {
  /**
   * The address the requests' paths are below, its path kept: 247Express's `{tracking_url}` for
   * tracking and `{base_url}` for its customer operations, GHN's `…/shiip/public-api`.
   */
  readonly trackingUrl: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read; a larger one fails the request with LOOKUP_TOO_LARGE. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to the carrier. */
  readonly connections: number;
  /** The header a request's `key` is sent in, for operations whose carrier does not document it. */
  readonly keyHeader?: string;
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
    const headers = this.headersOf(request);
    const httpRequest: Dispatcher.RequestOptions = {
      method: request.method,
      path: `${this.basePath}${request.path}`,
      ...(headers ? { headers } : {}),
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

  /** The request's headers, with its key in the key header when it carries one. */
  private headersOf(request: CarrierRequest): Readonly<Record<string, string>> | undefined {
    if (request.key === undefined) return request.headers;
    const { keyHeader } = this.options;
    if (keyHeader === undefined) throw new RangeError('a request carries a key, and the transport has no key header');
    return { ...request.headers, [keyHeader]: request.key };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
