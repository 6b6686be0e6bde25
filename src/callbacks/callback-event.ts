import { createHash } from 'node:crypto';
import type { CallbackMessage, CarrierInstant } from '../carriers/247express/contract.js';

export type CallbackAuthMethod = 'apikey' | 'basic';

/**
 * One accepted callback as the journal keeps it and `callback_events` loads it: the message's fields
 * with instants in UTC, the identity, who it authenticated as, and the body as it came minus `ApiKey`.
 */
export interface CallbackEventRecord {
  readonly eventId: string;
  readonly orderCode: string;
  readonly status: string;
  readonly statusName: string | null;
  readonly eventTime: CarrierInstant;
  readonly transactionId: string | null;
  readonly deliveryDate: CarrierInstant | null;
  readonly receiverName: string | null;
  readonly mailman: string | null;
  readonly deliveryNotes: string | null;
  readonly delayCode: string | null;
  readonly delayNotes: string | null;
  readonly requestFeedbackCount: number | null;
  readonly description: string | null;
  readonly externalCode: string | null;
  readonly referenceCode: string | null;
  readonly accountAlias: string | null;
  readonly authMethod: CallbackAuthMethod;
  readonly receivedAt: CarrierInstant;
  readonly body: Record<string, unknown>;
}

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

/** The journal record of a validated message; `raw` is the body as received, whose `ApiKey` is left out. */
export function callbackEventRecord(
  message: CallbackMessage,
  raw: Record<string, unknown>,
  auth: { readonly method: CallbackAuthMethod; readonly accountAlias: string | null },
  receivedAt: CarrierInstant,
): CallbackEventRecord {
  const { ApiKey: _apiKey, ...body } = raw;
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
    accountAlias: auth.accountAlias,
    authMethod: auth.method,
    receivedAt,
    body,
  };
}
