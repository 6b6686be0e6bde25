import { answerBodyAsRead } from '../answer-body.js';
import type {
  CarrierAccount,
  CarrierCall,
  CarrierErrorEffect,
  CarrierTracking,
  TrackerAnswer,
} from '../carrier-tracking.js';
import type { PayloadCheck } from '../payload-validation.js';
import type { GhnErrorAnswer, GhnResult } from './answer-envelope.js';
import { classifyGhnError, type GhnErrorKind } from './answer-errors.js';
import { checkGhnDetailAnswer, type GhnOrderDetail } from './order-detail.js';
import { checkGhnFeesAnswer, type GhnOrderFees } from './order-fees.js';
import { ghnFeesDue } from './reference-data.js';
import { ghnTrackedAnswer } from './tracked-answer.js';

/** GHN's paths below its base address (`…/shiip/public-api`). */
export const GHN_PATHS = {
  detail: '/v2/shipping-order/detail',
  fees: '/v2/shipping-order/soc',
} as const;

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

async function ghnCall<T>(
  call: CarrierCall,
  path: string,
  account: CarrierAccount,
  orderCode: string,
  check: (value: unknown) => PayloadCheck<GhnResult<T>>,
): Promise<GhnAnswer<T>> {
  const answer = await call(
    {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', token: account.key, shopid: account.shop ?? '' },
      body: JSON.stringify({ order_code: orderCode }),
      clientErrorsAnswer: true,
    },
    check,
  );
  const result = answer.value;
  return result.kind === 'ok'
    ? { kind: 'ok', value: result.value, body: answerBodyAsRead(answer.body, answer.decoded) }
    : { kind: 'carrier_error', error: result.error, errorKind: classifyGhnError(result.error), body: answer.body };
}

/** The order's detail by GHN's order code (the account's token, with its shop). */
export function ghnDetail(
  call: CarrierCall,
  account: CarrierAccount,
  orderCode: string,
): Promise<GhnAnswer<GhnOrderDetail>> {
  return ghnCall(call, GHN_PATHS.detail, account, orderCode, checkGhnDetailAnswer);
}

/** The order's actual fees (the account's token, with its shop). */
export function ghnFees(
  call: CarrierCall,
  account: CarrierAccount,
  orderCode: string,
): Promise<GhnAnswer<GhnOrderFees>> {
  return ghnCall(call, GHN_PATHS.fees, account, orderCode, checkGhnFeesAnswer);
}

function effectOf(kind: GhnErrorKind): CarrierErrorEffect {
  if (kind.stopsKey) return 'key_refused';
  return kind.transient ? 'retry' : 'final';
}

function errorAnswer(answer: Extract<GhnAnswer<unknown>, { kind: 'carrier_error' }>): TrackerAnswer {
  return {
    kind: 'carrier_error',
    errorCode: answer.errorKind.code,
    errorMessage: answer.error.message,
    effect: effectOf(answer.errorKind),
    body: answer.body,
  };
}

/**
 * GHN's order as a run asks it: its detail, then, once GHN charges it (from pick-up on), its actual
 * fees, which the detail does not hold: one lookup is then two calls. GHN answers errors with a text:
 * the stored code is the product's name of its kind. A fee call GHN refuses for the order alone (no
 * fees yet) leaves the order's fees unknown; one to be retried, or one refusing the shop, is the
 * lookup's answer.
 */
export const GHN_TRACKING: CarrierTracking = {
  async lookup(account, orderCode, call) {
    const detail = await ghnDetail(call, account, orderCode);
    if (detail.kind !== 'ok') return errorAnswer(detail);
    const order = detail.value.order_code;
    if (!ghnFeesDue(detail.value.status))
      return { kind: 'snapshot', orderCode: order, body: ghnTrackedAnswer(detail.body, null) };
    const fees = await ghnFees(call, account, order);
    if (fees.kind !== 'ok' && effectOf(fees.errorKind) !== 'final') return errorAnswer(fees);
    return { kind: 'snapshot', orderCode: order, body: ghnTrackedAnswer(detail.body, fees.body) };
  },
  // A snapshot is kept as both answers together (tracked-answer.ts); an error answer as GHN sent it.
  spooled(decoded) {
    const tracked = typeof decoded === 'object' && decoded !== null && 'detail' in decoded;
    const checked = checkGhnDetailAnswer(tracked ? decoded.detail : decoded);
    if (!checked.ok) return { kind: 'unreadable' };
    if (checked.value.kind !== 'ok') return { kind: 'carrier_error' };
    return tracked ? { kind: 'snapshot', orderCode: checked.value.value.order_code } : { kind: 'unreadable' };
  },
};
