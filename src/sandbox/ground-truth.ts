import { formatCarrierDateTime, STATUS } from '../carriers/247express/contract.js';
import type { SandboxClock } from './sandbox-clock.js';
import { REBILL_AFTER_DELIVERY_MS } from './world/billing.js';
import type { AnomalyKind, OrderPlan } from './world/order-plan.js';
import { type PayoutMonth, payoutMonth } from './world/payout-statements.js';
import type { SandboxWorld } from './world/sandbox-world.js';
import { eventsBy } from './world/tracking-snapshot.js';

export interface OrderTruth {
  orderCode: string;
  account: string;
  createdAt: string;
  /** Status at the clock's time; null before the order exists. */
  status: string | null;
  serviceTypeID: string;
  destination: { provinceName: string; districtName: string; wardName: string; farRegion: boolean };
  clientHubID: string;
  /** The COD the shop asked the carrier to collect, whole VND: the shop's own record of it. */
  codAmount: number;
  anomaly: AnomalyKind | null;
  imageCount: number;
  /** Every status change that has happened, with its failed-attempt reason. */
  events: { status: string; time: string; delayCode: string | null }[];
}

export interface AnomalyTruth {
  orderCode: string;
  account: string;
  kind: AnomalyKind;
  /** When the anomaly first shows in the order's tracking result. */
  observableFrom: string;
  observableNow: boolean;
}

/** What the sandbox generated, as of its clock: the answers audits and tests are scored against. */
export class GroundTruth {
  constructor(
    private readonly world: SandboxWorld,
    private readonly clock: SandboxClock,
  ) {}

  order(plan: OrderPlan): OrderTruth {
    const events = eventsBy(plan, this.clock.now());
    return {
      orderCode: plan.code,
      account: plan.account.alias,
      createdAt: formatCarrierDateTime(plan.createdAt),
      status: events[events.length - 1]?.status ?? null,
      serviceTypeID: plan.service.id,
      destination: {
        provinceName: plan.destination.province.name,
        districtName: plan.destination.district,
        wardName: plan.destination.ward,
        farRegion: plan.destination.province.farRegion,
      },
      clientHubID: plan.account.clientHubID,
      codAmount: plan.codAmount,
      anomaly: plan.anomaly,
      imageCount: plan.imageCount,
      events: events.map((e) => ({ status: e.status, time: formatCarrierDateTime(e.at), delayCode: e.delayCode })),
    };
  }

  *orders(accountAlias?: string): Generator<OrderTruth> {
    const account = accountAlias === undefined ? undefined : this.world.accounts.find((a) => a.alias === accountAlias);
    if (accountAlias !== undefined && account === undefined) return;
    for (const plan of this.world.orders(account?.index)) yield this.order(plan);
  }

  /** The payout statements of a month (YYYY-MM) as of the clock, with the COD anomalies planted in them. */
  payouts(month: string): PayoutMonth {
    return payoutMonth(this.world, month, this.clock.now());
  }

  anomalies(): AnomalyTruth[] {
    const now = this.clock.now();
    const found: AnomalyTruth[] = [];
    for (const plan of this.world.orders()) {
      if (plan.anomaly === null) continue;
      const from = anomalyVisibleFrom(plan);
      found.push({
        orderCode: plan.code,
        account: plan.account.alias,
        kind: plan.anomaly,
        observableFrom: formatCarrierDateTime(from),
        observableNow: now >= from,
      });
    }
    return found;
  }
}

function anomalyVisibleFrom(plan: OrderPlan): number {
  const at = (status: string) => plan.events.find((e) => e.status === status)?.at;
  if (plan.anomaly === 'total_changed_after_delivery')
    return (at(STATUS.DELIVERED) ?? plan.createdAt) + REBILL_AFTER_DELIVERY_MS;
  if (plan.anomaly === 'charge_on_cancelled') return at(STATUS.CANCELLED) ?? plan.createdAt;
  return plan.createdAt;
}
