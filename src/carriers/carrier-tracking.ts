import type { PayloadCheck } from './payload-validation.js';

/**
 * How a carrier looks one order up, declared in its folder: which requests, in which order, and what
 * the answers mean. The transport is a parameter, so this stays contract code; the product's one
 * tracker (`src/carriers/client/carrier-tracker.ts`) sends the requests.
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

/** The account a lookup is made with: its key (a secret) and its shop, where the carrier asks for one. */
export interface CarrierAccount {
  readonly key: string;
  readonly shop: string | undefined;
}

/** One request to the carrier. */
export interface CarrierRequest {
  readonly method: 'GET' | 'POST';
  /** Below the carrier's base address, with its query string. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /**
   * The account's key, sent in the header the transport is configured with (`keyHeader`): for an
   * operation whose key header the carrier does not document, so that it is a setting.
   */
  readonly key?: string;
  /**
   * The carrier answers its errors with a 4xx status and a body that says what is wrong (GHN): such a
   * body is read as an answer. 429 and 5xx stay failures.
   */
  readonly clientErrorsAnswer?: boolean;
}

/** An answer the contract accepted: its checked value, its decoded JSON, and its body as it came. */
export interface CheckedAnswer<T> {
  readonly value: T;
  readonly decoded: unknown;
  /** Every configured key already cleared out of it. */
  readonly body: Buffer;
}

/**
 * Sends one request, one attempt, and checks the answer with `check`; throws a lookup failure when no
 * usable answer came back (a transport failure, or an answer `check` refuses).
 */
export type CarrierCall = <T>(
  request: CarrierRequest,
  check: (decoded: unknown) => PayloadCheck<T>,
) => Promise<CheckedAnswer<T>>;

/** What a lookup's answer kept in the raw spool is: the order's snapshot with its code, an error answer, or neither. */
export type SpooledAnswer =
  | { readonly kind: 'snapshot'; readonly orderCode: string }
  | { readonly kind: 'carrier_error' }
  | { readonly kind: 'unreadable' };

export interface CarrierTracking {
  /** One lookup of `orderCode` with `account`, its requests sent through `call`. */
  lookup(account: CarrierAccount, orderCode: string, call: CarrierCall): Promise<TrackerAnswer>;
  /** Reads a lookup's answer as the raw spool keeps it (a `TrackerAnswer`'s body, decoded), for `replay`. */
  spooled(decoded: unknown): SpooledAnswer;
}
