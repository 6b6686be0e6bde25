import { STATUS } from '../../../carriers/247express/contract.js';
import { epochMsToInstant } from '../../../carriers/carrier-time.js';
import type { ChargeCheckName } from '../../../carriers/charge-check-names.js';
import type { GhnOrderDetailWire, GhnOrderFeesWire } from '../../../carriers/ghn/contract.js';
import { GHN_VOLUMETRIC_DIVISOR } from '../../../carriers/ghn/contract.js';
import type { Account, AnomalyKind, OrderPlan, StatusEvent } from '../../world/order-plan.js';

/**
 * GHN's orders in the sandbox are the plans of a world of their own, each planned status change told
 * as the GHN status it is, with GHN's COD states: collected on delivery, paid to the shop in a later
 * transfer batch.
 */
const GHN_STATUS_OF: Readonly<Record<string, string>> = {
  [STATUS.RECEIVED]: 'ready_to_pick',
  [STATUS.PICKED_UP]: 'picked',
  [STATUS.IN_TRANSPORT]: 'transporting',
  [STATUS.OUT_FOR_DELIVERY]: 'delivering',
  [STATUS.AWAITING_HANDLING]: 'delivery_fail',
  [STATUS.DELIVERED]: 'delivered',
  [STATUS.RETURNING]: 'return',
  [STATUS.RETURNED]: 'returned',
  [STATUS.CANCELLED]: 'cancel',
  [STATUS.LOST]: 'lost',
  [STATUS.CONFISCATED]: 'damage',
};

const DAY_MS = 86_400_000;
/** COD collected on a day is paid to the shop in the transfer batch this many days later. */
export const GHN_COD_TRANSFER_DAYS = 3;
/** The sandbox's own tariff: a base price, and a price per started half kilogram over the first. */
const BASE_FEE = 15_000;
const FEE_PER_HALF_KG = 2_500;

/** A GHN account: its token is the world account's key, its shop a number of its own. */
export function ghnShopId(account: Account): number {
  return 80_001 + account.index;
}

const iso = (ms: number) => epochMsToInstant(ms);

/** The GHN status a planned status change is. */
export function ghnStatusOf(event: StatusEvent): string {
  return GHN_STATUS_OF[event.status] ?? 'exception';
}

/** The order's status changes up to `now`, as GHN statuses. */
export function ghnEvents(plan: OrderPlan, now: number): { status: string; at: number }[] {
  return plan.events
    .filter((event: StatusEvent) => event.at <= now)
    .map((event) => ({ status: ghnStatusOf(event), at: event.at }));
}

function grams(plan: OrderPlan): number {
  return Math.round(plan.realWeight * 1000);
}

/**
 * The world's planted billing anomalies that GHN's answers can show, each with the check that finds
 * it; an order planted with another kind is charged as it should be.
 */
export const GHN_PLANTED_CHECKS: Partial<Readonly<Record<AnomalyKind, ChargeCheckName>>> = {
  total_mismatch: 'lines_sum',
  wrong_cal_weight: 'cal_weight',
  return_charge_not_returned: 'return_not_returned',
  charge_on_cancelled: 'cancelled_charged',
};

/** What a planted total mismatch adds to the payments, and a planted wrong converted weight to it (grams). */
const OVERBILLED_BY = 5_000;
const WRONG_WEIGHT_BY = 700;

/** The converted weight GHN answers, in grams: by its divisor, or off by a planted anomaly. */
function convertedGrams(plan: OrderPlan): number {
  const converted = Math.floor((plan.length * plan.width * plan.height) / GHN_VOLUMETRIC_DIVISOR);
  return plan.anomaly === 'wrong_cal_weight' ? converted + WRONG_WEIGHT_BY : converted;
}

/** When GHN starts charging the order: its first status past the pending ones (pick-up, or a cancel). */
export function ghnChargedFrom(plan: OrderPlan, now: number): number | undefined {
  return ghnEvents(plan, now).find((e) => !['ready_to_pick', 'picking'].includes(e.status))?.at;
}

/** What GHN charges the order, by its fee names, as of `now`. */
export function ghnFeeDetail(plan: OrderPlan, now: number) {
  const statuses = ghnEvents(plan, now).map((e) => e.status);
  const chargeable = Math.max(grams(plan), convertedGrams(plan));
  const price = BASE_FEE + FEE_PER_HALF_KG * Math.max(0, Math.ceil((chargeable - 1000) / 500));
  const mainService = statuses.includes('cancel') && plan.anomaly !== 'charge_on_cancelled' ? 0 : price;
  const returned = statuses.includes('return') || plan.anomaly === 'return_charge_not_returned';
  const attempts = statuses.filter((s) => s === 'delivery_fail').length;
  return {
    main_service: mainService,
    insurance: 0,
    station_do: 0,
    station_pu: 0,
    return: returned ? Math.round(mainService / 2) : 0,
    r2s: attempts > 1 ? (attempts - 1) * 5_000 : 0,
    coupon: 0,
  };
}

/** The order detail GHN answers at `now`, or undefined before the order exists. */
export function ghnOrderDetail(plan: OrderPlan, now: number): GhnOrderDetailWire | undefined {
  if (plan.createdAt > now) return undefined;
  const events = ghnEvents(plan, now);
  const last = events.at(-1)!;
  const delivered = events.find((e) => e.status === 'delivered');
  const finished = events.find((e) => ['delivered', 'returned', 'cancel', 'lost', 'damage'].includes(e.status));
  const picked = events.find((e) => e.status === 'picked');
  const collectedAt = delivered !== undefined && plan.codAmount > 0 ? delivered.at : undefined;
  const transferAt = collectedAt === undefined ? undefined : collectedAt + GHN_COD_TRANSFER_DAYS * DAY_MS;
  const transferred = transferAt !== undefined && transferAt <= now;
  return {
    order_code: plan.code,
    client_order_code: plan.externalCode ?? '',
    shop_id: ghnShopId(plan.account),
    status: last.status,
    weight: grams(plan),
    length: plan.length,
    width: plan.width,
    height: plan.height,
    converted_weight: convertedGrams(plan),
    service_type_id: 2,
    payment_type_id: 1,
    cod_amount: plan.codAmount,
    cod_failed_amount: 0,
    is_cod_collected: collectedAt !== undefined,
    is_cod_transferred: transferred,
    cod_collect_date: collectedAt === undefined ? null : iso(collectedAt),
    cod_transfer_date: transferred ? iso(transferAt) : null,
    cod_failed_collect_date: null,
    order_date: iso(plan.createdAt),
    leadtime: iso(plan.createdAt + 3 * DAY_MS),
    pickup_time: picked === undefined ? null : iso(picked.at),
    finish_date: finished === undefined ? null : iso(finished.at),
    updated_date: iso(last.at),
    // GHN's log starts at pick-up: a fresh order has none.
    ...(events.length > 1
      ? { log: events.slice(1).map((e) => ({ status: e.status, payment_type_id: 1, updated_date: iso(e.at) })) }
      : {}),
  };
}

/** The order's actual fees GHN answers at `now` (`/v2/shipping-order/soc`), or undefined before it exists. */
export function ghnOrderFees(plan: OrderPlan, now: number): GhnOrderFeesWire | undefined {
  if (plan.createdAt > now) return undefined;
  const detail = ghnFeeDetail(plan, now);
  const fees = Object.values(detail).reduce((sum, fee) => sum + fee, 0);
  const total = plan.anomaly === 'total_mismatch' ? fees + OVERBILLED_BY : fees;
  const chargedFrom = ghnChargedFrom(plan, now);
  return {
    order_code: plan.code,
    detail,
    payment:
      chargedFrom === undefined || total === 0
        ? []
        : [{ value: total, payment_type: 1, paid_date: iso(chargedFrom), created_date: iso(chargedFrom) }],
    cod_collect_date: '0001-01-01T00:00:00Z',
    transaction_id: `${plan.code}-fees`,
  };
}
