import type { CarrierAccount, CarrierCall } from './carrier-tracking.js';
import type { Money } from './money.js';

/**
 * A carrier's price calculation, as the product asks it and keeps its answer: the product's own shape
 * of a quote request and a quote (the columns of `price_quotes` and `price_quote_lines`), which a
 * carrier's folder maps to and from its wire fields.
 */

/** One parcel to quote: where it goes, its measures (cm, kg), the shop's hub it leaves from, the service asked. */
export interface PriceQuoteRequest {
  readonly toProvinceName: string;
  readonly toDistrictName: string;
  readonly toWardName: string;
  readonly length: number;
  readonly width: number;
  readonly height: number;
  readonly realWeight: number;
  readonly clientHubId: string;
  readonly serviceTypeId: string;
}

/** One charge line of a quote. */
export interface PriceQuoteLine {
  readonly extraServiceId: number;
  /** The carrier's service id, as its charge lines on an order name it. */
  readonly serviceId: string;
  readonly serviceName: string;
  readonly type: number;
  readonly cost: Money;
  readonly informFee: Money;
  readonly isDefaultService: boolean;
}

/** A quote the carrier gave. */
export interface PriceQuote {
  readonly mainPrice: Money;
  readonly totalServiceCost: Money;
  readonly couponMoneyRemainder: Money;
  readonly depositChangeAmount: Money;
  /** The converted (volumetric) weight, kg. */
  readonly calWeight: number;
  /** The chargeable weight, kg. */
  readonly weight: number;
  readonly priceMatrixId: string | null;
  readonly lines: readonly PriceQuoteLine[];
}

/** A price answer: a quote, or the carrier's refusal with its message. */
export type PriceAnswer =
  | { readonly kind: 'quote'; readonly quote: PriceQuote }
  | { readonly kind: 'carrier_error'; readonly message: string };

/**
 * How a carrier quotes a parcel, declared in its folder as contract code: the request sent through
 * the `CarrierCall` it is given, the answer checked and read. The product's transport sends it.
 */
export interface CarrierPriceQuotes {
  /** One quote asked with `account`; throws a lookup failure when no usable answer came back. */
  quote(account: CarrierAccount, request: PriceQuoteRequest, call: CarrierCall): Promise<PriceAnswer>;
}
