import { z } from 'zod';
import { measure } from '../field-types.js';
import type { PayloadCheck } from '../payload-validation.js';
import { checkGhnAnswer, type GhnResult } from './answer-envelope.js';
import { ghnAmount, ghnDateTime, ghnFlag, ghnInteger, ghnRequiredDateTime } from './ghn-fields.js';

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

export type GhnOrderDetail = z.output<typeof GhnOrderDetailSchema>;
export type GhnOrderDetailWire = z.input<typeof GhnOrderDetailSchema>;
export type GhnLogItem = z.output<typeof GhnLogItemSchema>;

/** Reads a decoded detail answer (by GHN's code or by the shop's own code). */
export function checkGhnDetailAnswer(value: unknown): PayloadCheck<GhnResult<GhnOrderDetail>> {
  return checkGhnAnswer(value, GhnOrderDetailSchema, 'GHN order detail');
}
