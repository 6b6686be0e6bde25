import type { Pool } from 'undici';
import { carrierEndpoint, carrierRequestText } from '../../client/carrier-request.js';
import { redactAnswerText } from '../../client/key-redaction.js';
import type { KeyRing } from '../../client/key-ring.js';
import { MalformedAnswerFailure } from '../../client/lookup-failures.js';
import {
  checkJsonPayload,
  type ImageItem,
  ImagesResultSchema,
  OPERATION_PATHS,
  PriceFailureSchema,
  type PriceRequest,
  type PriceResult,
  PriceResultSchema,
} from '../contract.js';

export interface CustomerOperationsClientOptions {
  /** `{base_url}` of the carrier's customer operations, e.g. `https://api.example.vn` (a path prefix is kept). */
  readonly baseUrl: string;
  /**
   * The header the account's API key travels in. The carrier's interface does not say how these two
   * operations authenticate; the sandbox expects `ApiKey`.
   */
  readonly authHeader: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read; a larger one fails the request with LOOKUP_TOO_LARGE. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to the carrier. */
  readonly connections: number;
}

/** A price answer: a quote, or the carrier's refusal (IsError true or Errors not empty) with its message. */
export type PriceAnswer =
  | { readonly kind: 'quote'; readonly quote: PriceResult }
  | { readonly kind: 'carrier_error'; readonly message: string };

/** An image list answer: the items, or the carrier's refusal (Errors not empty) with its code and message. */
export type ImagesAnswer =
  | { readonly kind: 'images'; readonly items: readonly ImageItem[] }
  | { readonly kind: 'carrier_error'; readonly code: string; readonly message: string };

/** The message of an error list such as `[{Field, Message}]` or `[{Code, Message}]`, on one line. */
function errorsMessage(errors: readonly unknown[], errorMessage: string | null | undefined): string {
  if (errorMessage) return errorMessage;
  const messages = errors.map((e) =>
    typeof e === 'object' && e !== null && 'Message' in e
      ? String((e as { Message: unknown }).Message)
      : JSON.stringify(e),
  );
  return messages.join('; ') || 'the carrier answered IsError without a message';
}

function firstErrorCode(errors: readonly unknown[]): string {
  const first = errors[0];
  const code =
    typeof first === 'object' && first !== null && 'Code' in first ? (first as { Code: unknown }).Code : undefined;
  return typeof code === 'string' && code !== '' ? code : 'CARRIER_ERROR';
}

/**
 * The carrier's two customer operations, price calculation and order images, over keep-alive HTTP
 * (undici), the key in a configurable header. One call is one attempt: the runs retry.
 */
export class CustomerOperationsClient {
  private readonly pool: Pool;
  private readonly prefix: string;

  constructor(
    private readonly options: CustomerOperationsClientOptions,
    /** Every configured key, cleared out of each answer before anything reads it. */
    private readonly keys: KeyRing,
  ) {
    const { pool, basePath } = carrierEndpoint(options.baseUrl, options.connections);
    this.pool = pool;
    this.prefix = basePath;
  }

  /** Quotes one parcel; throws a LookupFailure when no usable answer came back. */
  async quotePrice(apiKey: string, request: PriceRequest): Promise<PriceAnswer> {
    const body = await this.post(OPERATION_PATHS.price, apiKey, request);
    const failure = checkJsonPayload(PriceFailureSchema, body, 'price answer');
    if (!failure.ok) throw new MalformedAnswerFailure(failure.message);
    const { IsError, Errors, ErrorMessage } = failure.value;
    if (IsError === true || (Errors !== undefined && Errors.length > 0))
      return { kind: 'carrier_error', message: errorsMessage(Errors ?? [], ErrorMessage) };
    const checked = checkJsonPayload(PriceResultSchema, body, 'price answer');
    if (!checked.ok) throw new MalformedAnswerFailure(checked.message);
    return { kind: 'quote', quote: checked.value };
  }

  /** Lists one order's images; throws a LookupFailure when no usable answer came back. */
  async listImages(apiKey: string, orderCode: string): Promise<ImagesAnswer> {
    const body = await this.post(OPERATION_PATHS.images, apiKey, { OrderCode: orderCode });
    const checked = checkJsonPayload(ImagesResultSchema, body, 'images answer');
    if (!checked.ok) throw new MalformedAnswerFailure(checked.message);
    const { Items, Errors, ErrorMessage } = checked.value;
    if (Errors.length > 0)
      return { kind: 'carrier_error', code: firstErrorCode(Errors), message: errorsMessage(Errors, ErrorMessage) };
    return { kind: 'images', items: Items };
  }

  /** POSTs a JSON body; the answer's body, every key cleared out of it, when it is 2xx, else the failure. */
  private async post(path: string, apiKey: string, payload: unknown): Promise<string> {
    const text = await carrierRequestText(
      this.pool,
      {
        method: 'POST',
        path: `${this.prefix}${path}`,
        headers: { 'content-type': 'application/json', [this.options.authHeader]: apiKey },
        body: JSON.stringify(payload),
      },
      this.options,
    );
    return redactAnswerText(text, this.keys);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
