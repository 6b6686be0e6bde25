import { z } from 'zod';
import type { CarrierCallbacks, ParsedCallback } from '../carrier-callbacks.js';
import { measure } from '../field-types.js';
import { checkPayload } from '../payload-validation.js';
import { ghnAmount, ghnDateTime, ghnRequiredDateTime } from './ghn-fields.js';
import { findGhnFailureReason, GHN_FAILED_ATTEMPT_STATUSES, GHN_STATUSES } from './reference-data.js';

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

/**
 * The webhooks telling that the order's fees, COD or weights changed. Their bodies hold the new
 * values, but the fee call is what the charges are read from, with its breakdown and payments, so
 * such a webhook makes the next run ask it (a terminal order included).
 */
export const GHN_LOOKUP_WEBHOOK_TYPES = ['update_fee', 'update_cod', 'update_weight'] as const;

/** Where `callbacks serve` receives GHN's webhooks, on the address the shop registers with GHN. */
export const GHN_WEBHOOK_PATH = '/ghn/webhook';

/** An empty text is GHN's way of sending none. */
function textOrNull(text: string | null | undefined): string | null {
  return text === undefined || text === null || text === '' ? null : text;
}

function parsedWebhook(webhook: GhnWebhook): ParsedCallback {
  // GHN does not say whether its update_* webhooks carry Status: one without it is kept, its status empty.
  const status = webhook.Status ?? '';
  const reasonCode = textOrNull(webhook.ReasonCode);
  const statusChange = webhook.Type === 'switch_status';
  return {
    eventId: ghnWebhookEventId(webhook),
    orderCode: webhook.OrderCode,
    status,
    statusName: GHN_STATUSES.find((known) => known.code === status)?.name ?? null,
    eventTime: webhook.Time,
    transactionId: null,
    deliveryDate: statusChange && status === 'delivered' ? webhook.Time : null,
    receiverName: null,
    mailman: null,
    deliveryNotes: null,
    // The reference table writes GHN's reasons with their `GHN-` prefix; a code it does not hold is kept as sent.
    delayCode: reasonCode === null ? null : (findGhnFailureReason(reasonCode)?.code ?? reasonCode),
    delayNotes: textOrNull(webhook.Reason),
    requestFeedbackCount: null,
    description: textOrNull(webhook.Description),
    externalCode: textOrNull(webhook.ClientOrderCode),
    referenceCode: null,
    failedAttempt: statusChange && GHN_FAILED_ATTEMPT_STATUSES.includes(status),
  };
}

/**
 * GHN's webhooks: GHN signs nothing and sends no key, so the shop registers an address that carries
 * a secret token (docs/carriers/ghn.md). GHN wants HTTP 200; its answer's body is not specified, so
 * the receiver answers in GHN's own envelope.
 */
export const GHN_WEBHOOKS: CarrierCallbacks = {
  path: GHN_WEBHOOK_PATH,
  credential: { kind: 'none' },
  parse(body) {
    const checked = checkPayload(GhnWebhookSchema, body, 'GHN webhook');
    return checked.ok ? { ok: true, value: parsedWebhook(checked.value) } : checked;
  },
  answer: (status, reason) => JSON.stringify({ code: status, message: reason ?? 'Success' }),
  asksLookup: (body) =>
    `lower(json_extract_string(${body}, '$.Type')) IN (${GHN_LOOKUP_WEBHOOK_TYPES.map((type) => `'${type}'`).join(', ')})`,
};
