import { z } from 'zod';
import type { PayloadCheck } from '../payload-validation.js';
import { checkGhnAnswer, type GhnResult } from './answer-envelope.js';
import { ghnAmount, ghnDateTime } from './ghn-fields.js';

/** One payment of an order's fees (`payment`), by the shop or the receiver. */
export const GhnFeePaymentSchema = z.looseObject({
  value: ghnAmount,
  payment_type: z.number().int(),
  paid_date: ghnDateTime,
  created_date: ghnDateTime,
});

/**
 * An order's actual fees (`/v2/shipping-order/soc`): `detail` holds each fee by GHN's name; a fee
 * the list below does not name is kept as it came.
 */
export const GhnOrderFeesSchema = z.looseObject({
  order_code: z.string().min(1),
  detail: z.looseObject({
    main_service: ghnAmount,
    insurance: ghnAmount,
    station_do: ghnAmount,
    station_pu: ghnAmount,
    return: ghnAmount,
    r2s: ghnAmount,
    coupon: ghnAmount,
  }),
  payment: z
    .array(GhnFeePaymentSchema)
    .nullish()
    .transform((items) => items ?? []),
  cod_collect_date: ghnDateTime.optional(),
  transaction_id: z.string().nullish(),
});

export type GhnOrderFees = z.output<typeof GhnOrderFeesSchema>;
export type GhnOrderFeesWire = z.input<typeof GhnOrderFeesSchema>;

/** Reads a decoded fee answer. */
export function checkGhnFeesAnswer(value: unknown): PayloadCheck<GhnResult<GhnOrderFees>> {
  return checkGhnAnswer(value, GhnOrderFeesSchema, 'GHN order fees');
}
