import { DOCUMENTED_LIMITS, TRACKING_ERROR } from './reference-data.js';

const ORDER_CODE_CHARACTERS = /^[A-Za-z0-9_-]+$/;

export type OrderCodeRuleError =
  | typeof TRACKING_ERROR.ORDERCODE_MIN_LENGTH
  | typeof TRACKING_ERROR.ORDERCODE_MAX_LENGTH
  | typeof TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION;

/**
 * The carrier's documented order code rules: 5 to 20 characters of letters, digits, `_` and `-`.
 * Returns the error code the carrier answers for a code that breaks them, or undefined.
 */
export function checkOrderCode(code: string): OrderCodeRuleError | undefined {
  if (code.length < DOCUMENTED_LIMITS.orderCodeMinLength) return TRACKING_ERROR.ORDERCODE_MIN_LENGTH;
  if (code.length > DOCUMENTED_LIMITS.orderCodeMaxLength) return TRACKING_ERROR.ORDERCODE_MAX_LENGTH;
  if (!ORDER_CODE_CHARACTERS.test(code)) return TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION;
  return undefined;
}
