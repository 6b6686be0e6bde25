import { STATUS } from '../../carriers/247express/contract.js';
import type { OrderPlan } from './order-plan.js';
import { type Charges, chargesFromMain, priceParcel } from './tariff.js';

const HOUR = 3_600_000;

/** After delivery, an order with this anomaly is re-billed this long after the delivery. */
export const REBILL_AFTER_DELIVERY_MS = 6 * HOUR;

function reached(plan: OrderPlan, status: string, at: number): boolean {
  return plan.events.some((e) => e.status === status && e.at <= at);
}

function roundTo100(value: number): number {
  return Math.round(value / 100) * 100;
}

/** When an order with the total_changed_after_delivery anomaly is re-billed; undefined for any other order. */
export function rebilledAt(plan: OrderPlan): number | undefined {
  if (plan.anomaly !== 'total_changed_after_delivery') return undefined;
  const delivered = plan.events.find((e) => e.status === STATUS.DELIVERED);
  return delivered && delivered.at + REBILL_AFTER_DELIVERY_MS;
}

/** What the carrier bills for the order as seen at `at`: its clean charges, or its anomaly's. */
export function billedChargesAt(plan: OrderPlan, at: number): Charges {
  const origin = plan.account.hubProvince;
  const destination = plan.destination.province;
  const returned = reached(plan, STATUS.RETURNING, at);
  const clean = priceParcel(plan.service, origin, destination, plan, returned);
  const farRegion = destination.farRegion;
  const rebill = (
    main: number,
    extra: { returned?: boolean; fuelShare?: string; vatShare?: string } = {},
  ): Charges => ({
    calWeight: clean.calWeight,
    weight: clean.weight,
    ...chargesFromMain(plan.service, main, { farRegion, returned: extra.returned ?? returned, ...extra }),
  });

  if (reached(plan, STATUS.CANCELLED, at) && plan.anomaly !== 'charge_on_cancelled') {
    return {
      calWeight: clean.calWeight,
      weight: clean.weight,
      price: 0,
      priceFR: 0,
      farRegionFeeAmount: 0,
      fuelFeeAmount: 0,
      vatAmount: 0,
      totalServiceCost: 0,
      lines: [],
    };
  }
  switch (plan.anomaly) {
    case 'total_mismatch':
      return { ...clean, totalServiceCost: clean.totalServiceCost + Math.max(1000, roundTo100(clean.price * 0.1)) };
    case 'wrong_cal_weight':
      return { ...clean, calWeight: Math.round((clean.calWeight * 1.5 + 1) * 100) / 100 };
    case 'wrong_chargeable_weight': {
      const weight = clean.weight + 1;
      const main = priceParcel(plan.service, origin, destination, { ...plan, realWeight: weight }, returned).price;
      return { ...rebill(main), weight };
    }
    case 'wrong_fuel':
      return rebill(clean.price, { fuelShare: '0.25' });
    case 'wrong_vat':
      return rebill(clean.price, { vatShare: '0.12' });
    case 'far_region_fee_without_line':
      return { ...clean, lines: clean.lines.filter((l) => l.serviceID !== 'VSVX') };
    case 'return_charge_not_returned':
      return rebill(clean.price, { returned: true });
    case 'overbilled_vs_quote':
      return rebill(roundTo100(clean.price * 1.1));
    case 'total_changed_after_delivery': {
      const rebillAt = rebilledAt(plan);
      if (rebillAt !== undefined && at >= rebillAt) return rebill(clean.price + roundTo100(clean.price * 0.15));
      return clean;
    }
    default:
      return clean;
  }
}
