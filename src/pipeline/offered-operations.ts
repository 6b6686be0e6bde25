import type { CarrierDefinition } from '../carriers/carrier-definition.js';
import type { CarrierOrderImages } from '../carriers/carrier-order-images.js';
import type { CarrierPriceQuotes } from '../carriers/carrier-price-quotes.js';
import { findCarrier, KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { ProductError } from '../errors/product-error.js';

/** The operations a carrier may offer beside tracking, each what its definition declares. */
interface CustomerOperations {
  readonly price: CarrierPriceQuotes;
  readonly images: CarrierOrderImages;
}

export type CustomerOperation = keyof CustomerOperations;

const OPERATION_NAMES: Readonly<Record<CustomerOperation, string>> = {
  price: 'price calculation',
  images: 'order images',
};

function operationOf<K extends CustomerOperation>(
  carrier: CarrierDefinition,
  operation: K,
): CustomerOperations[K] | undefined {
  const offered: Partial<CustomerOperations> = { price: carrier.priceQuotes, images: carrier.orderImages };
  return offered[operation] as CustomerOperations[K] | undefined;
}

/** A run asked of a carrier that does not offer its operation: nothing was sent. */
export class OperationNotOfferedError extends ProductError {
  constructor(
    readonly carrier: string,
    readonly operation: CustomerOperation,
    /** The carriers that offer it. */
    readonly offeredBy: readonly string[],
  ) {
    super(
      'OPERATION_NOT_OFFERED',
      `${carrier} offers no ${OPERATION_NAMES[operation]}; ${operation} runs for ${offeredBy.join(', ') || 'no carrier'}`,
    );
  }
}

/** The carrier's `operation` as its definition declares it; OperationNotOfferedError when it has none. */
export function offeredOperation<K extends CustomerOperation>(carrierId: string, operation: K): CustomerOperations[K] {
  const carrier = findCarrier(carrierId);
  if (carrier === undefined) throw new RangeError(`no carrier ${carrierId}`);
  const offered = operationOf(carrier, operation);
  if (offered === undefined)
    throw new OperationNotOfferedError(
      carrierId,
      operation,
      KNOWN_CARRIERS.filter((known) => operationOf(known, operation) !== undefined).map((known) => known.id),
    );
  return offered;
}
