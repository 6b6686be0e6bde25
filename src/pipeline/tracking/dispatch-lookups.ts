import type { Logger } from 'pino';
import type { LookupLimiter } from '../../quota/lookup-limiter.js';
import type { RunWorkItem } from '../../warehouse/run-input-store.js';
import { DispatchWindow } from '../dispatch-window.js';
import type { ResultLoader } from './load-results.js';
import { lookUpOrder, type OrderLookupContext, type OrderOutcome } from './order-lookup.js';
import { noCounters, type RunCounters } from './run-summary.js';
import type { WorkList } from './select-work.js';

export interface LookupDispatchOptions {
  readonly work: WorkList;
  readonly lookup: OrderLookupContext;
  readonly limiter: LookupLimiter;
  readonly results: ResultLoader;
  /** Orders handed to the limiter at once. */
  readonly windowSize: number;
  readonly log: Logger;
}

/**
 * Hands the work list's orders to the limiter and the client through a DispatchWindow, within the
 * quota: an order whose key is spent is deferred without a request. Once the run is stopping (or its
 * breaker tripped) it hands over no more orders and stops reading the work list. Every outcome is
 * counted and goes to the loader.
 */
export class LookupDispatch {
  /** Outcomes so far in this process, for the progress display. */
  readonly counters: RunCounters = noCounters();
  done = 0;
  /** Aliases whose unknown key has been reported. */
  private readonly unknownKeysReported = new Set<string>();

  constructor(private readonly options: LookupDispatchOptions) {}

  /** The first outcome that could not be kept (a disk that filled): no more lookups, and the run ends with it. */
  private fault: { readonly error: unknown } | undefined;

  /** Resolves once every order has an outcome; rejects with the first that could not be kept, once those in flight end. */
  async run(): Promise<void> {
    const { work, lookup, limiter, results } = this.options;
    const window = new DispatchWindow(this.options.windowSize);
    orders: for await (const chunk of work.chunks()) {
      for (const { item, alias } of chunk) {
        // The run defers what it has not reached in one statement (deferRunWork), not an order at a time.
        if (this.fault !== undefined || lookup.stopping.aborted) break orders;
        if (limiter.isSpent(alias)) {
          this.record(item, alias, { kind: 'deferred', reason: limiter.spentReason(alias), attempts: 0 });
        } else {
          await window.enter();
          void lookUpOrder(lookup, item.orderCode, alias)
            .catch((error: unknown) => this.broken(item, error))
            .then((outcome) => {
              if (this.fault === undefined) this.record(item, alias, outcome);
            })
            .catch((error: unknown) => this.failed(error))
            .finally(() => window.leave());
        }
        if (results.full) await results.commit();
      }
    }
    await window.drained();
    if (this.fault !== undefined) throw this.fault.error;
  }

  /** The first outcome that could not be kept stops the limiter at once: no lookup waiting for a slot is sent. */
  private failed(error: unknown): void {
    if (this.fault !== undefined) return;
    this.fault = { error };
    void this.options.limiter.stop();
  }

  /** Not a carrier or transport failure: a fault of this program. The order is listed as failed and the run goes on. */
  private broken(item: RunWorkItem, error: unknown): OrderOutcome {
    const message = error instanceof Error ? error.message : String(error);
    this.options.log.error({ orderCode: item.orderCode, error: message }, 'lookup broke');
    return { kind: 'transport_error', errorCode: 'INTERNAL', errorMessage: message, attempts: 0 };
  }

  private record(item: RunWorkItem, alias: string, outcome: OrderOutcome): void {
    const { counters } = this;
    this.done++;
    this.options.results.add(item, alias, outcome);
    switch (outcome.kind) {
      case 'ok':
        counters.ok++;
        break;
      case 'carrier_error':
        counters.carrierErrors++;
        counters.carrierErrorsByCode[outcome.errorCode] = (counters.carrierErrorsByCode[outcome.errorCode] ?? 0) + 1;
        break;
      case 'transport_error':
        counters.transportErrors++;
        this.options.log.warn(
          { orderCode: item.orderCode, account: alias, errorCode: outcome.errorCode, attempts: outcome.attempts },
          'lookup failed for good',
        );
        break;
      case 'deferred':
        if (outcome.reason === 'key_not_found' && !this.unknownKeysReported.has(alias)) {
          this.unknownKeysReported.add(alias);
          this.options.log.warn(
            { account: alias },
            "the carrier does not know this account's API key: no more lookups with it, its orders deferred",
          );
        }
        counters.deferred++;
        counters.deferredByReason[outcome.reason] = (counters.deferredByReason[outcome.reason] ?? 0) + 1;
        break;
    }
  }
}
