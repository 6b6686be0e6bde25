import { CallbackSender, EXPRESS_CALLBACK_DIALECT } from './callback-sender.js';
import { FaultInjector } from './fault-injector.js';
import { GHN_WEBHOOK_DIALECT, type GhnWebhookSettings } from './ghn/ghn-webhooks.js';
import { GroundTruth } from './ground-truth.js';
import { LookupQuota } from './lookup-quota.js';
import { SandboxClock } from './sandbox-clock.js';
import type { SandboxOptions } from './sandbox-options.js';
import { SandboxWorld } from './world/sandbox-world.js';
import { deriveSeed } from './world/seeded-random.js';
import { TrackingAnswerCache } from './world/tracking-snapshot.js';

export interface SandboxLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Everything one running sandbox holds: its world, clock, counters, faults and callbacks. */
export class SandboxState {
  readonly world: SandboxWorld;
  /** GHN's accounts and orders: a world of their own, beside 247Express's. */
  readonly ghnWorld: SandboxWorld;
  readonly clock: SandboxClock;
  readonly quota: LookupQuota;
  readonly faults: FaultInjector;
  readonly callbacks: CallbackSender;
  /** GHN's webhooks of GHN's orders. */
  readonly ghnWebhooks: CallbackSender<GhnWebhookSettings>;
  readonly truth: GroundTruth;
  readonly trackingAnswers = new TrackingAnswerCache();

  constructor(
    readonly options: SandboxOptions,
    readonly logger: SandboxLogger,
  ) {
    this.clock = new SandboxClock(options.start, options.clockMode, options.clockSpeed);
    this.world = new SandboxWorld({
      seed: options.seed,
      accounts: options.accounts,
      ordersPerAccount: options.ordersPerAccount,
      start: options.start,
      historyDays: options.historyDays,
      futureDays: options.futureDays,
      codePrefix: options.codePrefix,
      lifecycle: options.lifecycle,
    });
    this.ghnWorld = new SandboxWorld({
      seed: deriveSeed(options.seed, 'ghn'),
      accounts: options.accounts,
      ordersPerAccount: options.ghn.ordersPerAccount,
      start: options.start,
      historyDays: options.historyDays,
      futureDays: options.futureDays,
      codePrefix: options.ghn.codePrefix,
      lifecycle: options.lifecycle,
    });
    this.quota = new LookupQuota(options.limits, this.clock);
    this.faults = new FaultInjector(options.faults, options.seed);
    this.callbacks = new CallbackSender(this.world, this.clock, options.callbacks, EXPRESS_CALLBACK_DIALECT, logger);
    this.ghnWebhooks = new CallbackSender(this.ghnWorld, this.clock, options.ghn.webhooks, GHN_WEBHOOK_DIALECT, logger);
    this.truth = new GroundTruth(this.world, this.clock);
  }

  /** Moves the clock forward and queues the callbacks and GHN's webhooks of the status changes it passed. */
  moveClockTo(instantMs: number): number {
    this.clock.moveTo(instantMs);
    return this.dispatchDue();
  }

  /** Queues the callbacks and GHN's webhooks of the status changes up to now; how many status changes. */
  dispatchDue(): number {
    return this.callbacks.dispatchDue() + this.ghnWebhooks.dispatchDue();
  }
}
