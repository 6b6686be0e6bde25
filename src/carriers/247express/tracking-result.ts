import { z } from 'zod';
import { carrierDateTime, listOrNull, measure, money, undocumented } from '../field-types.js';
import { checkPayload, type PayloadCheck } from '../payload-validation.js';

/** Element of `priceInfo`: one service billed on the order. */
export const PriceItemSchema = z.looseObject({
  serviceName: z.string(),
  serviceID: z.string(),
  cost: money,
});

/** Element of `statuses`: one status update, oldest first. */
export const StatusItemSchema = z.looseObject({
  time: carrierDateTime,
  status: z.string(),
  statusName: z.string(),
  trackingName: z.string(),
  // Liberal: an order created through the API has no post office yet.
  provinceName: z.string().nullable(),
  postOfficeName: z.string().nullable(),
});

/** Element of `trackings`: one handling event, oldest first. */
export const TrackingEventSchema = z.looseObject({
  statusID: z.string(),
  statusName: z.string(),
  postOfficeID: z.string().nullable(),
  postOfficeName: z.string().nullable(),
  provinceID: z.string().nullable(),
  provinceName: z.string().nullable(),
  dateChange: carrierDateTime,
  notes: z.string().nullable(),
});

/** The tracking lookup's answer when `errorCode` is null: the order's snapshot. */
export const TrackingSnapshotSchema = z.looseObject({
  errorMessage: z.string().nullable(),
  // Liberal: an empty errorCode is read as no error.
  errorCode: z.union([z.null(), z.literal('')]).optional(),
  orderCode: z.string(),
  externalCode: z.string().nullable(),
  // Liberal: null is accepted for an order the carrier has not picked up yet.
  acceptDate: carrierDateTime.nullable(),
  status: z.string(),
  statusName: z.string(),
  trackingName: z.string(),
  delayCode: z.string().nullable(),
  delayNote: z.string().nullable(),
  deliveryNotes: z.string().nullable(),
  deliveryDate: carrierDateTime.nullable(),
  poDeliveryID: undocumented,
  mailMan: undocumented,
  receiverName: z.string().nullable(),
  serviceTypeID: z.string(),
  mailerTypeID: z.string(),
  extraServiceName: z.string().nullable(),
  length: measure,
  width: measure,
  height: measure,
  realWeight: measure,
  calWeight: measure,
  weight: measure,
  quantity: z.number().int(),
  price: money,
  priceFR: money,
  farRegionFeeAmount: money,
  fuelFeeAmount: money,
  vatAmount: money,
  totalServiceCost: money,
  edtFrom: undocumented,
  edtTo: undocumented,
  senderID: undocumented,
  senderName: undocumented,
  postOfficeAcceptID: undocumented,
  codAmount: money,
  priceInfo: listOrNull(PriceItemSchema),
  statuses: listOrNull(StatusItemSchema),
  trackings: listOrNull(TrackingEventSchema),
  estimateRoutes: undocumented,
  confirmImage: undocumented,
});

/** The tracking lookup's answer when `errorCode` is set; the other fields are not relied on. */
export const TrackingErrorSchema = z.looseObject({
  errorCode: z.string().min(1),
  errorMessage: z.string().nullable(),
  orderCode: z.string().nullish(),
});

export type PriceItem = z.output<typeof PriceItemSchema>;
export type StatusItem = z.output<typeof StatusItemSchema>;
export type TrackingEvent = z.output<typeof TrackingEventSchema>;
export type TrackingSnapshot = z.output<typeof TrackingSnapshotSchema>;
export type TrackingError = z.output<typeof TrackingErrorSchema>;
/** The wire shape of a successful tracking result, as the carrier (or the sandbox) writes it. */
export type TrackingSnapshotWire = z.input<typeof TrackingSnapshotSchema>;
export type TrackingErrorWire = z.input<typeof TrackingErrorSchema>;

export type TrackingResult = { kind: 'snapshot'; snapshot: TrackingSnapshot } | { kind: 'error'; error: TrackingError };

/**
 * Reads a decoded tracking lookup answer: an error result when `errorCode` is set, else a snapshot.
 * A wrong payload is rejected with a message naming the field.
 */
export function checkTrackingResult(value: unknown): PayloadCheck<TrackingResult> {
  const hasErrorCode =
    typeof value === 'object' &&
    value !== null &&
    'errorCode' in value &&
    ![null, ''].includes((value as { errorCode: unknown }).errorCode as string);
  if (hasErrorCode) {
    const checked = checkPayload(TrackingErrorSchema, value, 'tracking result');
    return checked.ok ? { ok: true, value: { kind: 'error', error: checked.value } } : checked;
  }
  const checked = checkPayload(TrackingSnapshotSchema, value, 'tracking result');
  return checked.ok ? { ok: true, value: { kind: 'snapshot', snapshot: checked.value } } : checked;
}
