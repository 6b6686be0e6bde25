import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallbackDialect, SenderSettings } from '../callback-sender.js';
import type { FaultInjector } from '../fault-injector.js';
import type { SandboxClock } from '../sandbox-clock.js';
import type { HangingRequests } from '../server/faulty-answer.js';
import type { Account } from '../world/order-plan.js';
import type { SandboxWorld } from '../world/sandbox-world.js';

/** What a carrier's sandbox answers with: its own world of accounts and orders, the shared clock and faults. */
export interface SandboxCarrierContext {
  readonly world: SandboxWorld;
  readonly clock: SandboxClock;
  readonly faults: FaultInjector;
}

/** One planted anomaly of a carrier's world: the order, and the check of the charges report that must find it. */
export interface PlantedAnomaly {
  readonly orderCode: string;
  readonly account: string;
  readonly kind: string;
  readonly check: string;
  /** Carrier time when its answers first show it; null while none does. */
  readonly observableFrom: string | null;
  readonly observableNow: boolean;
}

/**
 * A carrier the sandbox serves beside 247Express, declared in its folder (`src/sandbox/carriers/<id>/`)
 * and registered once in sandbox-carriers.ts. The sandbox gives it a world of its own (its options
 * section, flags and control routes are made from this declaration) and a webhook sender; the
 * carrier says how its API answers and what its webhooks are.
 */
export interface SandboxCarrier {
  /** The product's id of the carrier (known-carriers.ts): its options section, flags and control routes are named by it. */
  readonly id: string;
  /** As the carrier writes its own name, for help texts. */
  readonly name: string;
  /** Where its API is served: its base address is the sandbox's URL and this path. */
  readonly basePath: string;
  /** Its world's defaults: orders per account and the capital letters its order codes start with. */
  readonly world: { readonly ordersPerAccount: number; readonly codePrefix: string };
  /** Its webhooks and how the carrier sends them again: attempts in all, and the first wait. */
  readonly webhooks: {
    readonly dialect: CallbackDialect<SenderSettings>;
    readonly maxAttempts: number;
    readonly retryBaseMs: number;
  };
  /** Answers one request below `basePath` (the path is whole), faults injected. */
  handle(
    context: SandboxCarrierContext,
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
    hanging: HangingRequests,
  ): Promise<void>;
  /** The shop the carrier asks beside an account's key, where it asks for one (GHN's ShopId). */
  shopOf?(account: Account): string;
  /** The billing anomalies planted in its world, as of `now`, each with the check that must find it. */
  anomalies(world: SandboxWorld, now: number): PlantedAnomaly[];
}
