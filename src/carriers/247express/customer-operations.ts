import type { CarrierOrderImages, OrderImagesAnswer } from '../carrier-order-images.js';
import type { CarrierPriceQuotes, PriceAnswer, PriceQuote, PriceQuoteRequest } from '../carrier-price-quotes.js';
import type { CarrierRequest } from '../carrier-tracking.js';
import { checkPayload, type PayloadCheck } from '../payload-validation.js';
import { OPERATION_PATHS } from './operation-paths.js';
import { ImagesResultSchema } from './order-images.js';
import { PriceFailureSchema, type PriceRequest, type PriceResult, PriceResultSchema } from './price-quote.js';

/**
 * 247Express's two customer operations, price calculation and order images: one POST each, the
 * account's key in the configured key header (its interface does not say which; the sandbox expects
 * `ApiKey`).
 */

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

function customerRequest(path: string, key: string, payload: unknown): CarrierRequest {
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    key,
  };
}

/** The wire body of a quote request. */
export function priceRequestBody(request: PriceQuoteRequest): PriceRequest {
  return {
    ToProvinceName: request.toProvinceName,
    ToDistrictName: request.toDistrictName,
    ToWardName: request.toWardName,
    Length: request.length,
    Width: request.width,
    Height: request.height,
    RealWeight: request.realWeight,
    ClientHubID: request.clientHubId,
    ServiceTypeID: request.serviceTypeId,
  };
}

/** A quote as the product keeps it. */
function quoteOf(result: PriceResult): PriceQuote {
  return {
    mainPrice: result.MainPrice,
    totalServiceCost: result.TotalServiceCost,
    couponMoneyRemainder: result.CouponMoneyRemainder,
    depositChangeAmount: result.DepositChangeAmount,
    calWeight: result.CalWeight,
    weight: result.Weight,
    priceMatrixId: result.PriceMatrixID,
    lines: result.ExtraServices.map((line) => ({
      extraServiceId: line.ExtraServiceID,
      serviceId: line.ServiceID,
      serviceName: line.ServiceName,
      type: line.Type,
      cost: line.Cost,
      informFee: line.InformFee,
      isDefaultService: line.IsDefaultService,
    })),
  };
}

/**
 * A price answer: the carrier's refusal (IsError true or Errors not empty) read from its error fields
 * alone, since a failed answer need not carry the numbers; else the quote, checked whole.
 */
function checkPriceAnswer(decoded: unknown): PayloadCheck<PriceAnswer> {
  const failure = checkPayload(PriceFailureSchema, decoded, 'price answer');
  if (!failure.ok) return failure;
  const { IsError, Errors, ErrorMessage } = failure.value;
  if (IsError === true || (Errors !== undefined && Errors.length > 0))
    return { ok: true, value: { kind: 'carrier_error', message: errorsMessage(Errors ?? [], ErrorMessage) } };
  const result = checkPayload(PriceResultSchema, decoded, 'price answer');
  return result.ok ? { ok: true, value: { kind: 'quote', quote: quoteOf(result.value) } } : result;
}

export const EXPRESS_PRICE_QUOTES: CarrierPriceQuotes = {
  async quote(account, request, call) {
    const answer = await call(
      customerRequest(OPERATION_PATHS.price, account.key, priceRequestBody(request)),
      checkPriceAnswer,
    );
    return answer.value;
  },
};

export const EXPRESS_ORDER_IMAGES: CarrierOrderImages = {
  async list(account, orderCode, call): Promise<OrderImagesAnswer> {
    const answer = await call(
      customerRequest(OPERATION_PATHS.images, account.key, { OrderCode: orderCode }),
      (decoded) => checkPayload(ImagesResultSchema, decoded, 'images answer'),
    );
    const { Items, Errors, ErrorMessage } = answer.value;
    if (Errors.length > 0)
      return { kind: 'carrier_error', code: firstErrorCode(Errors), message: errorsMessage(Errors, ErrorMessage) };
    return { kind: 'images', images: Items.map((item) => ({ no: item.No, imageUrl: item.ImageURL })) };
  },
};
