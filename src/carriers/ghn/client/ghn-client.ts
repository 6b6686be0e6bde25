import type { Pool } from 'undici';
import { answerBodyAsRead } from '../../answer-body.js';
import { carrierEndpoint, carrierRequestAnswer } from '../../client/carrier-request.js';
import { redactedJsonAnswer } from '../../client/key-redaction.js';
import type { KeyRing } from '../../client/key-ring.js';
import { MalformedAnswerFailure } from '../../client/lookup-failures.js';
import type { PayloadCheck } from '../../payload-validation.js';
import type { GhnErrorAnswer, GhnResult } from '../answer-envelope.js';
import { classifyGhnError, type GhnErrorKind } from '../answer-errors.js';
import { checkGhnDetailAnswer, type GhnOrderDetail } from '../order-detail.js';
import { checkGhnFeesAnswer, type GhnOrderFees } from '../order-fees.js';

/** GHN's paths below its base address (`…/shiip/public-api`). */
export const GHN_PATHS = {
  detail: '/v2/shipping-order/detail',
  fees: '/v2/shipping-order/soc',
} as const;

export interface GhnClientOptions {
  /** GHN's base address, e.g. `https://online-gateway.ghn.vn/shiip/public-api` (its path is kept). */
  readonly baseUrl: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read; a larger one fails the lookup with LOOKUP_TOO_LARGE. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to GHN. */
  readonly connections: number;
}

/** One GHN account: its token (a secret) and its shop. */
export interface GhnAccount {
  readonly token: string;
  readonly shopId: string;
}

/**
 * One answered call: the body as it came (every configured token cleared out of it) and what it
 * means; an error answer with its kind.
 */
export type GhnAnswer<T> =
  | { readonly kind: 'ok'; readonly value: T; readonly body: Buffer }
  | {
      readonly kind: 'carrier_error';
      readonly error: GhnErrorAnswer;
      readonly errorKind: GhnErrorKind;
      readonly body: Buffer;
    };

/**
 * GHN's order detail and fee calls over keep-alive HTTP (undici). One call is one request, one
 * attempt: retries are the pipeline's, because every attempt passes through the quota first.
 */
export class GhnClient {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(
    private readonly options: GhnClientOptions,
    /** Every configured token, cleared out of each answer before anything reads it. */
    private readonly keys: KeyRing,
  ) {
    const { pool, basePath } = carrierEndpoint(options.baseUrl, options.connections);
    this.pool = pool;
    this.basePath = basePath;
  }

  /** The order's detail by GHN's order code; throws a LookupFailure when no usable answer came back. */
  detail(account: GhnAccount, orderCode: string, signal?: AbortSignal): Promise<GhnAnswer<GhnOrderDetail>> {
    return this.call(GHN_PATHS.detail, account, orderCode, checkGhnDetailAnswer, signal);
  }

  /** The order's actual fees; throws a LookupFailure when no usable answer came back. */
  fees(account: GhnAccount, orderCode: string, signal?: AbortSignal): Promise<GhnAnswer<GhnOrderFees>> {
    return this.call(GHN_PATHS.fees, account, orderCode, checkGhnFeesAnswer, signal);
  }

  private async call<T>(
    path: string,
    account: GhnAccount,
    orderCode: string,
    check: (value: unknown) => PayloadCheck<GhnResult<T>>,
    signal?: AbortSignal,
  ): Promise<GhnAnswer<T>> {
    const received = await carrierRequestAnswer(
      this.pool,
      {
        method: 'POST',
        path: `${this.basePath}${path}`,
        headers: { 'content-type': 'application/json', token: account.token, shopid: account.shopId },
        body: JSON.stringify({ order_code: orderCode }),
        ...(signal ? { signal } : {}),
      },
      this.options,
    );
    const { decoded, body } = redactedJsonAnswer(received.body, this.keys);
    const checked = check(decoded);
    if (!checked.ok) throw new MalformedAnswerFailure(checked.message);
    const result = checked.value;
    return result.kind === 'ok'
      ? { kind: 'ok', value: result.value, body: answerBodyAsRead(body, decoded) }
      : { kind: 'carrier_error', error: result.error, errorKind: classifyGhnError(result.error), body };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
