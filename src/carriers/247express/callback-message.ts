import { z } from 'zod';
import { carrierDateTime } from '../field-types.js';

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
