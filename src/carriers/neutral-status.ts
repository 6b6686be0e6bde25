/**
 * The status set every carrier's own statuses map to, so that one report speaks of all carriers' parcels
 * alike (close to the tags of the common multi-carrier tools). A carrier's own code and name always stay
 * beside it.
 */
export const NEUTRAL_STATUSES = [
  'pending',
  'picked_up',
  'in_transit',
  'out_for_delivery',
  'delivery_failed',
  'returning',
  'returned',
  'delivered',
  'cancelled',
  'lost_or_damaged',
  'unknown',
] as const;

export type NeutralStatus = (typeof NEUTRAL_STATUSES)[number];

/** What each neutral status means, for the docs and the warehouse's reference table. */
export const NEUTRAL_STATUS_MEANINGS: Readonly<Record<NeutralStatus, string>> = {
  pending: 'Known to the carrier, not yet picked up',
  picked_up: 'Picked up from the shop',
  in_transit: 'Moving between the carrier’s offices',
  out_for_delivery: 'With a courier for delivery',
  delivery_failed: 'A delivery attempt failed; the carrier will try again or return it',
  returning: 'On its way back to the shop',
  returned: 'Returned to the shop',
  delivered: 'Delivered to the receiver',
  cancelled: 'Cancelled before delivery',
  lost_or_damaged: 'Lost, damaged or seized: neither delivered nor returned',
  unknown: 'A status code the product does not know',
};
