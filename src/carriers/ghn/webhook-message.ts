import { z } from 'zod';
import { measure } from '../field-types.js';
import { ghnAmount, ghnDateTime, ghnRequiredDateTime } from './ghn-fields.js';

/** The fees a webhook carries (`Fee`), GHN's names as they come. */
export const GhnWebhookFeeSchema = z.looseObject({
  MainService: ghnAmount,
  Insurance: ghnAmount,
  StationDO: ghnAmount,
  StationPU: ghnAmount,
  Return: ghnAmount,
  R2S: ghnAmount,
  Coupon: ghnAmount,
  CODFee: ghnAmount.optional(),
  CODFailedFee: ghnAmount.optional(),
  DeliverRemoteAreasFee: ghnAmount.optional(),
  PickRemoteAreasFee: ghnAmount.optional(),
  DocumentReturn: ghnAmount.optional(),
  DoubleCheck: ghnAmount.optional(),
  Total: ghnAmount.optional(),
});

/** What a webhook tells of: GHN's documentation and its samples disagree on case, so it is read in lower case. */
export const GHN_WEBHOOK_TYPES = ['create', 'switch_status', 'update_weight', 'update_cod', 'update_fee'] as const;

/**
 * A webhook GHN posts to the shop's address. `Type` is kept as sent apart from case; a type the list
 * does not hold is kept too, as data.
 */
export const GhnWebhookSchema = z.looseObject({
  OrderCode: z.string().min(1),
  ClientOrderCode: z.string().nullish(),
  ShopID: z.number().int().optional(),
  Type: z
    .string()
    .min(1)
    .transform((type) => type.toLowerCase()),
  Status: z.string().nullish(),
  Time: ghnRequiredDateTime,
  Description: z.string().nullish(),
  Reason: z.string().nullish(),
  ReasonCode: z.string().nullish(),
  Warehouse: z.string().nullish(),
  CODAmount: ghnAmount.optional(),
  // GHN's own documentation calls this the date COD was collected.
  CODTransferDate: ghnDateTime.optional(),
  ConvertedWeight: measure.optional(),
  Weight: measure.optional(),
  Length: measure.optional(),
  Width: measure.optional(),
  Height: measure.optional(),
  Fee: GhnWebhookFeeSchema.optional(),
  // Fee.Total has been seen 0 beside a TotalFee that is the sum of the fees: TotalFee is the total.
  TotalFee: ghnAmount.optional(),
  PaymentType: z.number().int().optional(),
  IsPartialReturn: z.boolean().optional(),
  PartialReturnCode: z.string().nullish(),
});

export type GhnWebhook = z.output<typeof GhnWebhookSchema>;
export type GhnWebhookWire = z.input<typeof GhnWebhookSchema>;

/** GHN sends a webhook again when unanswered and may send them out of order: one event is its order, type and time. */
export function ghnWebhookEventId(webhook: GhnWebhook): string {
  return `${webhook.OrderCode}|${webhook.Type}|${webhook.Time}`;
}
