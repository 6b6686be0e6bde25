import { formatCarrierDateTime } from '../../../carriers/carrier-time.js';
import type { ChargeCheckName } from '../../../carriers/charge-check-names.js';
import type { AnomalyKind } from '../../world/order-plan.js';
import type { SandboxWorld } from '../../world/sandbox-world.js';
import { GHN_PLANTED_CHECKS, ghnChargedFrom } from './ghn-orders.js';

/** A billing anomaly planted in a GHN order, the check that must find it, and when its answers show it. */
export interface GhnAnomalyTruth {
  readonly orderCode: string;
  readonly account: string;
  readonly kind: AnomalyKind;
  readonly check: ChargeCheckName;
  /** Null while no answer shows it: the wrong converted weight is in the detail from the start, the fees from pick-up on. */
  readonly observableFrom: string | null;
  readonly observableNow: boolean;
}

/** The billing anomalies planted in the GHN world's orders, as of `now`. */
export function ghnAnomalies(world: SandboxWorld, now: number): GhnAnomalyTruth[] {
  const found: GhnAnomalyTruth[] = [];
  for (const plan of world.orders()) {
    const check = plan.anomaly === null ? undefined : GHN_PLANTED_CHECKS[plan.anomaly];
    if (plan.anomaly === null || check === undefined) continue;
    const from = check === 'cal_weight' ? plan.createdAt : ghnChargedFrom(plan, Number.POSITIVE_INFINITY);
    found.push({
      orderCode: plan.code,
      account: plan.account.alias,
      kind: plan.anomaly,
      check,
      observableFrom: from === undefined ? null : formatCarrierDateTime(from),
      observableNow: from !== undefined && from <= now,
    });
  }
  return found;
}
