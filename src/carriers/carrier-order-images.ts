import type { CarrierAccount, CarrierCall } from './carrier-tracking.js';

/** One image of an order, as `order_images` keeps it: its number (from 1) and its link. */
export interface OrderImage {
  readonly no: number;
  readonly imageUrl: string;
}

/** An image list answer: the order's images, or the carrier's refusal with its code and message. */
export type OrderImagesAnswer =
  | { readonly kind: 'images'; readonly images: readonly OrderImage[] }
  | { readonly kind: 'carrier_error'; readonly code: string; readonly message: string };

/**
 * How a carrier lists an order's images (proof of delivery), declared in its folder as contract code:
 * the request sent through the `CarrierCall` it is given, the answer checked and read.
 */
export interface CarrierOrderImages {
  /** One order's images asked with `account`; throws a lookup failure when no usable answer came back. */
  list(account: CarrierAccount, orderCode: string, call: CarrierCall): Promise<OrderImagesAnswer>;
}
