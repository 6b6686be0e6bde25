import { CallbackSender, EXPRESS_CALLBACK_DIALECT, type SenderSettings } from './callback-sender.js';
import type { SandboxCarrier } from './carriers/sandbox-carrier.js';
import { SANDBOX_CARRIERS } from './carriers/sandbox-carriers.js';
import { FaultInjector } from './fault-injector.js';
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

/** A carrier served beside 247Express, as it runs: its declaration, its own world and its webhooks. */
export interface ServedCarrier {
  readonly carrier: SandboxCarrier;
  readonly world: SandboxWorld;
  readonly webhooks: CallbackSender<SenderSettings>;
}

/** Everything one running sandbox holds: its worlds, clock, counters, faults and callbacks. */
export class SandboxState {
  /** 247Express's accounts and orders. */
  readonly world: SandboxWorld;
  /** The other carriers, each with a world of its own, by id. */
  readonly carriers: ReadonlyMap<string, ServedCarrier>;
  readonly clock: SandboxClock;
  readonly quota: LookupQuota;
  readonly faults: FaultInjector;
  readonly callbacks: CallbackSender;
  readonly truth: GroundTruth;
  readonly trackingAnswers = new TrackingAnswerCache();

  constructor(
    readonly options: SandboxOptions,
    readonly logger: SandboxLogger,
    servedCarriers: readonly SandboxCarrier[] = SANDBOX_CARRIERS,
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
    this.quota = new LookupQuota(options.limits, this.clock);
    this.faults = new FaultInjector(options.faults, options.seed);
    this.callbacks = new CallbackSender(this.world, this.clock, options.callbacks, EXPRESS_CALLBACK_DIALECT, logger);
    this.carriers = new Map(
      servedCarriers.map((carrier) => {
        const section = options.carriers[carrier.id]!;
        const world = new SandboxWorld({
          seed: deriveSeed(options.seed, carrier.id),
          accounts: options.accounts,
          ordersPerAccount: section.ordersPerAccount,
          start: options.start,
          historyDays: options.historyDays,
          futureDays: options.futureDays,
          codePrefix: section.codePrefix,
          lifecycle: options.lifecycle,
        });
        const webhooks = new CallbackSender(world, this.clock, section.webhooks, carrier.webhooks.dialect, logger);
        return [carrier.id, { carrier, world, webhooks }] as const;
      }),
    );
    this.truth = new GroundTruth(this.world, this.clock);
  }

  /** A carrier served beside 247Express; throws for one the sandbox does not serve. */
  carrier(id: string): ServedCarrier {
    const served = this.carriers.get(id);
    if (served === undefined) throw new RangeError(`the sandbox serves no carrier ${id}`);
    return served;
  }

  /** Every sender of callbacks: 247Express's, then each other carrier's webhooks. */
  senders(): CallbackSender<SenderSettings>[] {
    return [this.callbacks, ...[...this.carriers.values()].map((served) => served.webhooks)];
  }

  /** Moves the clock forward and queues the callbacks and webhooks of the status changes it passed. */
  moveClockTo(instantMs: number): number {
    this.clock.moveTo(instantMs);
    return this.dispatchDue();
  }

  /** Queues the callbacks and webhooks of the status changes up to now; how many status changes. */
  dispatchDue(): number {
    return this.senders().reduce((changes, sender) => changes + sender.dispatchDue(), 0);
  }
}
