import { checkOrderCode, TRACKING_ERROR, type TrackingErrorWire } from '../../carriers/247express/contract.js';
import type { LookupQuota } from '../lookup-quota.js';
import type { SandboxWorld } from '../world/sandbox-world.js';
import type { TrackingAnswerCache } from '../world/tracking-snapshot.js';

const ERROR_MESSAGES: Record<string, string> = {
  [TRACKING_ERROR.MISSING_APIKEY]: 'API key is required',
  [TRACKING_ERROR.MISSING_ORDERCODE]: 'Order code is required',
  [TRACKING_ERROR.ORDERCODE_MIN_LENGTH]: 'Order code must be at least 5 characters',
  [TRACKING_ERROR.ORDERCODE_MAX_LENGTH]: 'Order code must be at most 20 characters',
  [TRACKING_ERROR.ORDERCODE_NOT_FOUND]: 'Order code does not exist',
  [TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT]: 'Order code does not belong to your account',
  [TRACKING_ERROR.APIKEY_NOT_FOUND]: 'API key not found',
  [TRACKING_ERROR.APIKEY_LIMIT]: 'Lookups exceeded 200,000 per day',
  [TRACKING_ERROR.EXCEPTION]: 'An error occurred, please contact the carrier',
  [TRACKING_ERROR.ORDERCODE_FORMAT_EXCEPTION]: 'Order code must not contain special characters other than _ and -',
};

/** The carrier's error answer: the result object with every field null but the error's. */
export function trackingErrorResult(errorCode: string, orderCode: string | null, message?: string): TrackingErrorWire {
  return {
    errorMessage: message ?? ERROR_MESSAGES[errorCode] ?? errorCode,
    errorCode,
    orderCode,
    externalCode: null,
    acceptDate: null,
    status: null,
    statusName: null,
    trackingName: null,
    delayCode: null,
    delayNote: null,
    deliveryNotes: null,
    deliveryDate: null,
    poDeliveryID: null,
    mailMan: null,
    receiverName: null,
    serviceTypeID: null,
    mailerTypeID: null,
    extraServiceName: null,
    length: null,
    width: null,
    height: null,
    realWeight: null,
    calWeight: null,
    weight: null,
    quantity: null,
    price: null,
    priceFR: null,
    farRegionFeeAmount: null,
    fuelFeeAmount: null,
    vatAmount: null,
    totalServiceCost: null,
    edtFrom: null,
    edtTo: null,
    senderID: null,
    senderName: null,
    postOfficeAcceptID: null,
    codAmount: null,
    priceInfo: null,
    statuses: null,
    trackings: null,
    estimateRoutes: null,
    confirmImage: null,
  };
}

/**
 * Answers one tracking lookup as the documented carrier does, as JSON; checks in this order: key and
 * code present, key known, the key's daily limit and the global one (every request with a known key
 * counts), code rules, code known, code of the key's account.
 */
export function answerTrackingLookup(
  world: SandboxWorld,
  quota: LookupQuota,
  answers: TrackingAnswerCache,
  now: number,
  apiKey: string | undefined,
  orderCode: string | undefined,
): string | Buffer {
  const code = orderCode ?? null;
  const failure = (errorCode: string, message?: string) =>
    JSON.stringify(trackingErrorResult(errorCode, code, message));
  if (apiKey === undefined || apiKey === '') return failure(TRACKING_ERROR.MISSING_APIKEY);
  if (orderCode === undefined || orderCode === '') return failure(TRACKING_ERROR.MISSING_ORDERCODE);
  const account = world.findAccountByKey(apiKey);
  if (!account) return failure(TRACKING_ERROR.APIKEY_NOT_FOUND);
  const admission = quota.admit(account.alias);
  if (admission === 'key_limit') {
    return failure(
      TRACKING_ERROR.APIKEY_LIMIT,
      `Lookups exceeded ${quota.current.perKeyDaily.toLocaleString('en-US')} per day`,
    );
  }
  if (admission === 'global_limit') {
    return failure(
      TRACKING_ERROR.APIKEY_LIMIT,
      `The carrier's lookups exceeded ${quota.current.globalDaily.toLocaleString('en-US')} per day`,
    );
  }
  const ruleError = checkOrderCode(orderCode);
  if (ruleError) return failure(ruleError);
  const plan = world.findOrder(orderCode);
  const snapshot = plan && answers.snapshotJson(plan, now);
  if (!plan || !snapshot) return failure(TRACKING_ERROR.ORDERCODE_NOT_FOUND);
  if (plan.account !== account) return failure(TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT);
  return snapshot;
}
