import { z } from 'zod';
import { measure } from '../field-types.js';
import { checkPayload, type PayloadCheck } from '../payload-validation.js';
import { ghnAmount, ghnDateTime, ghnFlag, ghnInteger, ghnRequiredDateTime } from './ghn-fields.js';

/** The envelope of every GHN answer: `code` 200 and `data` on success, else an error text in `message`. */
export const GhnEnvelopeSchema = z.looseObject({
  code: z.number().int(),
  message: z.string(),
  // An error answer may leave `data` out.
  data: z.unknown().optional(),
  code_message: z.string().optional(),
});

/** Element of `log`: one status change, oldest first. */
export const GhnLogItemSchema = z.looseObject({
  status: z.string(),
  updated_date: ghnRequiredDateTime,
  payment_type_id: ghnInteger.optional(),
  trip_code: z.string().optional(),
});

/**
 * The order detail (`/v2/shipping-order/detail`): what the product relies on is checked, every other
 * field is kept as it came. GHN leaves out `log` on an order not yet picked up, and some answers leave
 * out the COD dates.
 */
export const GhnOrderDetailSchema = z.looseObject({
  order_code: z.string().min(1),
  client_order_code: z.string().nullish(),
  shop_id: z.number().int().optional(),
  status: z.string().min(1),
  weight: measure,
  length: measure,
  width: measure,
  height: measure,
  converted_weight: measure,
  service_type_id: ghnInteger.optional(),
  payment_type_id: ghnInteger.optional(),
  cod_amount: ghnAmount,
  cod_failed_amount: ghnAmount.optional(),
  is_cod_collected: ghnFlag.optional(),
  is_cod_transferred: ghnFlag.optional(),
  cod_collect_date: ghnDateTime.optional(),
  cod_transfer_date: ghnDateTime.optional(),
  cod_failed_collect_date: ghnDateTime.optional(),
  order_date: ghnDateTime,
  leadtime: ghnDateTime.optional(),
  pickup_time: ghnDateTime.optional(),
  finish_date: ghnDateTime.optional(),
  updated_date: ghnDateTime.optional(),
  log: z
    .array(GhnLogItemSchema)
    .nullish()
    .transform((items) => items ?? []),
});

export type GhnEnvelope = z.output<typeof GhnEnvelopeSchema>;
export type GhnOrderDetail = z.output<typeof GhnOrderDetailSchema>;
export type GhnOrderDetailWire = z.input<typeof GhnOrderDetailSchema>;
export type GhnLogItem = z.output<typeof GhnLogItemSchema>;

/** An answer whose envelope is not a success: GHN's code and text, as it sent them. */
export interface GhnErrorAnswer {
  readonly code: number;
  readonly message: string;
  readonly codeMessage: string | null;
}

export type GhnDetailResult = { kind: 'order'; order: GhnOrderDetail } | { kind: 'error'; error: GhnErrorAnswer };

/**
 * Reads a decoded detail answer. The lookup by the shop's own code documents `data` as a list of one
 * order where the lookup by GHN's code gives the order itself: both are read.
 */
export function checkGhnDetailAnswer(value: unknown): PayloadCheck<GhnDetailResult> {
  const envelope = checkPayload(GhnEnvelopeSchema, value, 'GHN order detail');
  if (!envelope.ok) return envelope;
  const { code, message, data, code_message } = envelope.value;
  if (code !== 200)
    return { ok: true, value: { kind: 'error', error: { code, message, codeMessage: code_message ?? null } } };
  const order = Array.isArray(data) && data.length === 1 ? data[0] : data;
  const checked = checkPayload(GhnOrderDetailSchema, order, 'GHN order detail');
  return checked.ok ? { ok: true, value: { kind: 'order', order: checked.value } } : checked;
}
