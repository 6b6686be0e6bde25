import { epochMsToInstant } from '../../../carriers/carrier-time.js';
import {
  GHN_FAILURE_REASONS,
  GHN_STATUSES,
  GHN_VOLUMETRIC_DIVISOR,
  type GhnWebhookWire,
} from '../../../carriers/ghn/contract.js';
import type { CallbackDialect, SenderSettings } from '../../callback-sender.js';
import type { OrderPlan } from '../../world/order-plan.js';
import { deriveSeed, SeededRandom } from '../../world/seeded-random.js';
import { ghnFeeDetail, ghnShopId, ghnStatusOf } from './ghn-orders.js';

const DELIVERY_REASONS = GHN_FAILURE_REASONS.filter((reason) => reason.leg === 'delivery');

/** GHN writes its webhook's Time with milliseconds in UTC. */
function ghnTime(ms: number): string {
  return new Date(ms).toISOString();
}

type WebhookType = 'create' | 'switch_status' | 'update_fee';

/** The webhook GHN sends of the order's `eventIndex`-th status change, as `type`, in the shape of its published sample. */
export function ghnWebhook(plan: OrderPlan, eventIndex: number, type: WebhookType): GhnWebhookWire {
  const event = plan.events[eventIndex]!;
  const status = ghnStatusOf(event);
  const fees = ghnFeeDetail(plan, event.at);
  const totalFee = Object.values(fees).reduce((sum, fee) => sum + fee, 0);
  const reason =
    status === 'delivery_fail'
      ? new SeededRandom(deriveSeed(plan.createdAt, 'ghn-reason', plan.code, eventIndex)).pick(DELIVERY_REASONS)
      : undefined;
  const grams = Math.round(plan.realWeight * 1000);
  return {
    CODAmount: plan.codAmount,
    CODTransferDate: null,
    ClientOrderCode: plan.externalCode ?? '',
    ConvertedWeight: Math.floor((plan.length * plan.width * plan.height) / GHN_VOLUMETRIC_DIVISOR),
    Description: GHN_STATUSES.find((known) => known.code === status)?.displayName ?? status,
    Fee: {
      CODFailedFee: 0,
      CODFee: 0,
      Coupon: fees.coupon,
      DeliverRemoteAreasFee: 0,
      DocumentReturn: 0,
      DoubleCheck: 0,
      Insurance: fees.insurance,
      MainService: fees.main_service,
      PickRemoteAreasFee: 0,
      R2S: fees.r2s,
      Return: fees.return,
      StationDO: fees.station_do,
      StationPU: fees.station_pu,
      // As in GHN's sample: Fee.Total 0, the total in TotalFee.
      Total: 0,
    },
    Height: plan.height,
    IsPartialReturn: false,
    Length: plan.length,
    OrderCode: plan.code,
    PartialReturnCode: '',
    PaymentType: 1,
    Reason: reason?.meaning ?? '',
    ReasonCode: reason?.code ?? '',
    ShopID: ghnShopId(plan.account),
    Status: status,
    Time: ghnTime(event.at),
    TotalFee: totalFee,
    Type: type,
    Warehouse: `Bưu Cục ${event.office.name}`,
    Weight: grams,
    Width: plan.width,
  };
}

/** Whether the order's fees changed at its `eventIndex`-th status change. */
function feesChangedAt(plan: OrderPlan, eventIndex: number): boolean {
  if (eventIndex === 0) return false;
  const at = plan.events[eventIndex]!.at;
  return JSON.stringify(ghnFeeDetail(plan, at - 1)) !== JSON.stringify(ghnFeeDetail(plan, at));
}

/**
 * GHN's webhooks: `create` for a new order, `switch_status` for each later status change, and
 * `update_fee` when the change moved its fees (a return, a redelivery). POSTed to the registered
 * address as it is; GHN takes HTTP 200 as received and otherwise sends the webhook again, at a fixed
 * interval (docs/carriers/ghn.md: 10 more times, 5 seconds apart).
 */
export const GHN_WEBHOOK_DIALECT: CallbackDialect<SenderSettings> = {
  seedName: 'ghn-webhook',
  callbacksOf(plan, eventIndex) {
    const types: WebhookType[] = [eventIndex === 0 ? 'create' : 'switch_status'];
    if (feesChangedAt(plan, eventIndex)) types.push('update_fee');
    const at = plan.events[eventIndex]!.at;
    return types.map((type) => {
      const body = ghnWebhook(plan, eventIndex, type);
      return {
        // As the receiver reads it (ghnWebhookEventId): order, type and the UTC instant.
        id: `${plan.code}|${type}|${epochMsToInstant(at)}`,
        status: body.Status ?? '',
        type,
        time: ghnTime(at),
        delayCode: body.ReasonCode === '' ? null : (body.ReasonCode ?? null),
        body,
      };
    });
  },
  // To the whole address the shop registered (its token included), not to a path of it.
  target: ({ url }) => ({ url, headers: {} }),
  accepted: (statusCode) => statusCode === 200,
  retryFactor: 1,
  jitter: false,
};
