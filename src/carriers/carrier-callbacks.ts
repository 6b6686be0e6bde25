import type { CarrierInstant } from './carrier-time.js';
import type { PayloadCheck } from './payload-validation.js';

/**
 * One status callback (a webhook) as every carrier's parser gives it: the columns of
 * `callback_events`, with instants in UTC. Fields a carrier does not send are null.
 */
export interface ParsedCallback {
  /** The event's identity: the carrier's retries of one event have the same one. */
  readonly eventId: string;
  readonly orderCode: string;
  /** The carrier's own status code (its reference data maps it to the neutral status). */
  readonly status: string;
  readonly statusName: string | null;
  readonly eventTime: CarrierInstant;
  readonly transactionId: string | null;
  readonly deliveryDate: CarrierInstant | null;
  readonly receiverName: string | null;
  readonly mailman: string | null;
  readonly deliveryNotes: string | null;
  /** The reason of a failed attempt, as the code of the carrier's delay reasons. */
  readonly delayCode: string | null;
  readonly delayNotes: string | null;
  readonly requestFeedbackCount: number | null;
  readonly description: string | null;
  /** The shop's own order id. */
  readonly externalCode: string | null;
  readonly referenceCode: string | null;
  /** The callback tells of a failed delivery attempt (a row of `delivery_failures`). */
  readonly failedAttempt: boolean;
}

/**
 * How a carrier proves a callback is its own: the account's API key sent back in a field of the body,
 * or nothing (the carrier signs nothing: the partner registers an address carrying a secret token).
 */
export type CallbackCredential = { readonly kind: 'body-key'; readonly field: string } | { readonly kind: 'none' };

/** What the receiver needs of a carrier's status callbacks, declared in the carrier's folder. */
export interface CarrierCallbacks {
  /** The path the carrier POSTs to on the partner's address. */
  readonly path: string;
  readonly credential: CallbackCredential;
  /** Validates a decoded body; the message names each wrong field. */
  parse(body: Record<string, unknown>): PayloadCheck<ParsedCallback>;
  /** The answer's body with HTTP `status`, as the carrier expects it: accepted, or refused for `reason`. */
  answer(status: number, reason?: string): string;
  /**
   * SQL: true where a stored callback's `body` (JSON, as the carrier sent it) tells that facts a
   * lookup gives changed (fees, COD, weights), so the order is looked up again after it, even when
   * its status is terminal. Absent: no callback of the carrier asks for a lookup.
   */
  asksLookup?(body: string): string;
}
