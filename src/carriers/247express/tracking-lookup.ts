import { answerBodyAsRead } from '../answer-body.js';
import type { CarrierErrorEffect, CarrierTracking } from '../carrier-tracking.js';
import { OPERATION_PATHS } from './operation-paths.js';
import { findTrackingErrorCode, TRACKING_ERROR } from './reference-data.js';
import { checkTrackingResult } from './tracking-result.js';

/** What each of 247Express's error codes does to a lookup. */
function effectOf(errorCode: string): CarrierErrorEffect {
  if (errorCode === TRACKING_ERROR.APIKEY_LIMIT) return 'key_limit';
  // Every lookup with this key would get the same answer.
  if (errorCode === TRACKING_ERROR.APIKEY_NOT_FOUND) return 'key_refused';
  return findTrackingErrorCode(errorCode)?.transient ? 'retry' : 'final';
}

/** 247Express's tracking lookup: one GET with the key and the order code in its query. */
export const EXPRESS_TRACKING: CarrierTracking = {
  async lookup(account, orderCode, call) {
    const query = new URLSearchParams({ apiKey: account.key, ordercode: orderCode });
    const answer = await call(
      { method: 'GET', path: `${OPERATION_PATHS.tracking}?${query.toString()}` },
      checkTrackingResult,
    );
    const result = answer.value;
    if (result.kind === 'snapshot')
      return {
        kind: 'snapshot',
        orderCode: result.snapshot.orderCode,
        body: answerBodyAsRead(answer.body, answer.decoded),
      };
    const { errorCode, errorMessage } = result.error;
    return { kind: 'carrier_error', errorCode, errorMessage, effect: effectOf(errorCode), body: answer.body };
  },
  spooled(decoded) {
    const checked = checkTrackingResult(decoded);
    if (!checked.ok) return { kind: 'unreadable' };
    return checked.value.kind === 'snapshot'
      ? { kind: 'snapshot', orderCode: checked.value.snapshot.orderCode }
      : { kind: 'carrier_error' };
  },
};
