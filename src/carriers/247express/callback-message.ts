import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { CarrierCallbacks, ParsedCallback } from '../carrier-callbacks.js';
import { carrierDateTime } from '../field-types.js';
import { checkPayload } from '../payload-validation.js';
import { FAILED_ATTEMPT_STATUSES } from './reference-data.js';

/** The path the carrier POSTs status callbacks to, on the partner's own address (spelling exact). */
export const CALLBACK_PATH = '/IntergrationAPI';

/** A text field the carrier may send as null (nulls are sent explicitly). */
const text = z.string().nullable();

/**
 * Body of the carrier's status callback. `Time` has been seen with seven fractional digits and
 * `DeliveryDate` without an offset (carrier-local time); both are handed on as UTC instants.
 */
export const CallbackMessageSchema = z.looseObject({
  Time: carrierDateTime,
  TransactionId: text.optional(),
  DeliveryDate: carrierDateTime.nullable().optional(),
  ReceiverName: text.optional(),
  Mailman: text.optional(),
  DeliveryNotes: text.optional(),
  DelayNotes: text.optional(),
  RequestFeedbackCount: z.number().int().nullable().optional(),
  Description: text.optional(),
  Status: z.string(),
  StatusName: text.optional(),
  OrderCode: z.string().min(1),
  // Absent when the partner authenticates the carrier with HTTP Basic instead.
  ApiKey: text.optional(),
  DelayCode: text.optional(),
  ExternalCode: text.optional(),
  ReferenceCode: text.optional(),
});

/** The partner endpoint's answer, by the carrier's convention. */
export const CallbackAnswerSchema = z.looseObject({
  IsError: z.boolean(),
  ErrorMessage: z.string().nullable(),
});

export type CallbackMessage = z.output<typeof CallbackMessageSchema>;
export type CallbackMessageWire = z.input<typeof CallbackMessageSchema>;
export type CallbackAnswer = z.output<typeof CallbackAnswerSchema>;

/**
 * The identity of a callback, so the carrier's retries are stored once: its TransactionId when it has
 * one, else a SHA-256 of order, status and time (the UTC instant, so two spellings of one time agree).
 */
export function callbackEventId(
  message: Pick<CallbackMessage, 'TransactionId' | 'OrderCode' | 'Status' | 'Time'>,
): string {
  const transactionId = message.TransactionId?.trim();
  if (transactionId) return transactionId;
  return `sha256:${createHash('sha256').update(`${message.OrderCode}\n${message.Status}\n${message.Time}`).digest('hex')}`;
}

function parsedCallback(message: CallbackMessage): ParsedCallback {
  return {
    eventId: callbackEventId(message),
    orderCode: message.OrderCode,
    status: message.Status,
    statusName: message.StatusName ?? null,
    eventTime: message.Time,
    transactionId: message.TransactionId ?? null,
    deliveryDate: message.DeliveryDate ?? null,
    receiverName: message.ReceiverName ?? null,
    mailman: message.Mailman ?? null,
    deliveryNotes: message.DeliveryNotes ?? null,
    delayCode: message.DelayCode ?? null,
    delayNotes: message.DelayNotes ?? null,
    requestFeedbackCount: message.RequestFeedbackCount ?? null,
    description: message.Description ?? null,
    externalCode: message.ExternalCode ?? null,
    referenceCode: message.ReferenceCode ?? null,
    failedAttempt: FAILED_ATTEMPT_STATUSES.includes(message.Status),
  };
}

/** 247Express's status callbacks: on CALLBACK_PATH, the account's key in the body's ApiKey (or HTTP Basic). */
export const EXPRESS_CALLBACKS: CarrierCallbacks = {
  path: CALLBACK_PATH,
  credential: { kind: 'body-key', field: 'ApiKey' },
  parse(body) {
    const checked = checkPayload(CallbackMessageSchema, body, 'callback');
    return checked.ok ? { ok: true, value: parsedCallback(checked.value) } : checked;
  },
  answer: (_status, reason) => JSON.stringify({ IsError: reason !== undefined, ErrorMessage: reason ?? '' }),
};
