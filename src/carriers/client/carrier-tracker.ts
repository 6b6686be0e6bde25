/**
 * What a tracking run asks of a carrier, whatever the carrier: one order looked up with one account's
 * key, and what the answer means for the lookup. Each carrier's folder has its tracker; the run knows
 * none of their fields.
 */

/** How a carrier's error answer bears on the lookup. */
export type CarrierErrorEffect =
  /** The order's outcome: recorded, the order looked up again in a later run unless its code settles it. */
  | 'final'
  /** The carrier's own transient failure: retried like a lost answer. */
  | 'retry'
  /** The key's lookups for the carrier day are spent: its other orders wait for the next day. */
  | 'key_limit'
  /** The key is refused: no order is looked up with it in this run. */
  | 'key_refused';

export type TrackerAnswer =
  /** The order as the carrier sees it: the code it names, and the answer's body as it came (which the loader reads). */
  | { readonly kind: 'snapshot'; readonly orderCode: string; readonly body: Buffer }
  | {
      readonly kind: 'carrier_error';
      /** The carrier's error code, or the product's code for an error the carrier answers with a text. */
      readonly errorCode: string;
      readonly errorMessage: string | null;
      readonly effect: CarrierErrorEffect;
      readonly body: Buffer;
    };

export interface CarrierTracker {
  /** One request, one attempt, with the key of `alias`; throws a LookupFailure when no usable answer came back. */
  lookup(alias: string, orderCode: string, signal?: AbortSignal): Promise<TrackerAnswer>;
  close(): Promise<void>;
}
