import { setMaxListeners } from 'node:events';
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import { request } from 'undici';
import {
  CALLBACK_PATH,
  CallbackAnswerSchema,
  type CallbackMessageWire,
  formatCarrierDateTime,
  formatCarrierLocalDateTime,
  STATUS,
} from '../carriers/247express/contract.js';
import type { SandboxClock } from './sandbox-clock.js';
import type { OrderPlan } from './world/order-plan.js';
import type { SandboxWorld } from './world/sandbox-world.js';
import { deriveSeed, SeededRandom } from './world/seeded-random.js';
import { statusDisplayName, statusName } from './world/tracking-snapshot.js';

/** How any carrier's callbacks are sent: where, how often, how hard. */
export interface SenderSettings {
  /** Where callbacks go; unset: none are sent. */
  readonly url?: string | undefined;
  readonly maxAttempts: number;
  /** Wait before the first retry (see CallbackDialect.retryFactor). */
  readonly retryBaseMs: number;
  readonly timeoutMs: number;
  readonly concurrency: number;
  /** Share of callbacks the sandbox never sends (to test missed-callback detection). */
  readonly dropRate: number;
  /** Share of callbacks sent twice, as a carrier's retry would. */
  readonly duplicateRate: number;
}

export interface CallbackSettings extends SenderSettings {
  /** The partner's own address; callbacks go to `${url}/IntergrationAPI`. Unset: none are sent. */
  readonly url?: string | undefined;
  readonly auth: 'apikey' | 'basic';
  readonly basicUser?: string | undefined;
  readonly basicPassword?: string | undefined;
}

export type CallbackOutcome = 'pending' | 'delivered' | 'dropped' | 'failed';

export interface CallbackRecord {
  /** The callback's identity: 247Express's TransactionId, GHN's order, type and time. */
  readonly transactionId: string;
  readonly orderCode: string;
  readonly account: string;
  readonly status: string;
  /** What the callback tells of, where the carrier names it (GHN's Type). */
  readonly type?: string;
  readonly time: string;
  readonly delayCode: string | null;
  outcome: CallbackOutcome;
  attempts: number;
  duplicated: boolean;
  lastError: string | null;
}

/** One callback to send, of one status change. */
export interface OutgoingCallback {
  readonly id: string;
  readonly status: string;
  readonly type?: string;
  readonly time: string;
  readonly delayCode: string | null;
  readonly body: object;
}

/** What one carrier's callbacks are: their bodies, where they go, what answer accepts them, how they are retried. */
export interface CallbackDialect<S extends SenderSettings> {
  /** Names the seed of each callback's drop and duplicate draws. */
  readonly seedName: string;
  /** The callbacks of the order's `eventIndex`-th status change. */
  callbacksOf(plan: OrderPlan, eventIndex: number, settings: S): OutgoingCallback[];
  /** The address and headers of every POST. */
  target(settings: S & { readonly url: string }): { readonly url: string; readonly headers: Record<string, string> };
  accepted(statusCode: number, answerText: string): boolean;
  /** Each wait is the one before times this: 1 keeps the waits fixed. */
  readonly retryFactor: number;
  /** Spread the waits at random. */
  readonly jitter: boolean;
}

interface Logger {
  warn(obj: object, msg: string): void;
}

/** The callback message of an order's `eventIndex`-th status change. */
export function callbackMessage(plan: OrderPlan, eventIndex: number, withApiKey: boolean): CallbackMessageWire {
  const event = plan.events[eventIndex]!;
  const delivered = event.status === STATUS.DELIVERED;
  const attempted = delivered || event.status === STATUS.AWAITING_HANDLING || event.status === STATUS.OUT_FOR_DELIVERY;
  return {
    Time: formatCarrierDateTime(event.at, 7, plan.eventTimeTicks[eventIndex]),
    TransactionId: transactionIdOf(plan, eventIndex),
    DeliveryDate: delivered ? formatCarrierLocalDateTime(event.at) : null,
    ReceiverName: delivered ? plan.receiverName : null,
    Mailman: attempted ? plan.mailman : null,
    DeliveryNotes: delivered ? 'Đã giao hàng thành công' : null,
    DelayNotes: event.delayNote,
    RequestFeedbackCount: 0,
    Description: statusDisplayName(event.status),
    Status: event.status,
    StatusName: statusName(event.status),
    OrderCode: plan.code,
    ...(withApiKey ? { ApiKey: plan.account.apiKey } : {}),
    DelayCode: event.delayCode,
    ExternalCode: plan.externalCode,
    ReferenceCode: plan.referenceCode,
  };
}

export function transactionIdOf(plan: OrderPlan, eventIndex: number): string {
  return `${plan.code}-${String(eventIndex + 1).padStart(2, '0')}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * 247Express's callbacks: one per status change to `URL/IntergrationAPI`, the key in the body or HTTP
 * Basic, accepted when the partner answers IsError false; retried with a doubling, jittered wait.
 */
export const EXPRESS_CALLBACK_DIALECT: CallbackDialect<CallbackSettings> = {
  seedName: 'callback',
  callbacksOf(plan, eventIndex, settings) {
    const event = plan.events[eventIndex]!;
    return [
      {
        id: transactionIdOf(plan, eventIndex),
        status: event.status,
        time: formatCarrierDateTime(event.at),
        delayCode: event.delayCode,
        body: callbackMessage(plan, eventIndex, settings.auth === 'apikey'),
      },
    ];
  },
  target({ url, auth, basicUser, basicPassword }) {
    const headers: Record<string, string> =
      auth === 'basic'
        ? { authorization: `Basic ${Buffer.from(`${basicUser ?? ''}:${basicPassword ?? ''}`).toString('base64')}` }
        : {};
    return { url: `${url}${CALLBACK_PATH}`, headers };
  },
  accepted(statusCode, answerText) {
    const parsed = CallbackAnswerSchema.safeParse(safeJson(answerText));
    return statusCode < 300 && parsed.success && !parsed.data.IsError;
  },
  retryFactor: 2,
  jitter: true,
};

/**
 * Sends a carrier's callbacks of each status change to the partner's endpoint as the sandbox's clock
 * passes it, retrying as the carrier does until the partner accepts. Every callback is recorded with
 * its outcome so tests can check what the partner should hold.
 */
export class CallbackSender<S extends SenderSettings = CallbackSettings> {
  private cursor: number;
  private readonly records: CallbackRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly controller = new AbortController();

  constructor(
    private readonly world: SandboxWorld,
    private readonly clock: SandboxClock,
    private settings: S,
    private readonly dialect: CallbackDialect<S>,
    private readonly logger: Logger,
  ) {
    this.cursor = clock.now();
    this.limit = pLimit(settings.concurrency);
    // Each delivery in flight listens for the stop up to three times (its request, its answer's body
    // and its retries), and lets go once done: that many listeners are the design, not a leak.
    setMaxListeners(3 * settings.concurrency + 1, this.controller.signal);
  }

  configure(settings: Partial<S>): void {
    this.settings = { ...this.settings, ...settings };
  }

  get current(): S {
    return this.settings;
  }

  /** Queues the status changes that happened since the last call, oldest first. */
  dispatchDue(): number {
    const now = this.clock.now();
    const from = this.cursor;
    this.cursor = now;
    if (this.settings.url === undefined || now <= from) return 0;
    const due: { plan: OrderPlan; index: number; at: number }[] = [];
    for (const plan of this.world.orders()) {
      plan.events.forEach((event, index) => {
        if (event.at > from && event.at <= now) due.push({ plan, index, at: event.at });
      });
    }
    due.sort((a, b) => a.at - b.at);
    for (const { plan, index } of due) this.queue(plan, index);
    return due.length;
  }

  private queue(plan: OrderPlan, index: number): void {
    for (const callback of this.dialect.callbacksOf(plan, index, this.settings)) {
      const rng = new SeededRandom(deriveSeed(this.world.options.seed, this.dialect.seedName, callback.id));
      const dropped = rng.chance(this.settings.dropRate);
      const duplicated = !dropped && rng.chance(this.settings.duplicateRate);
      const record: CallbackRecord = {
        transactionId: callback.id,
        orderCode: plan.code,
        account: plan.account.alias,
        status: callback.status,
        ...(callback.type === undefined ? {} : { type: callback.type }),
        time: callback.time,
        delayCode: callback.delayCode,
        outcome: dropped ? 'dropped' : 'pending',
        attempts: 0,
        duplicated,
        lastError: null,
      };
      this.records.push(record);
      if (dropped) continue;
      const body = JSON.stringify(callback.body);
      const sends = duplicated ? 2 : 1;
      for (let i = 0; i < sends; i++) {
        const delivery = this.limit(() => this.deliver(record, body)).finally(() => this.inFlight.delete(delivery));
        this.inFlight.add(delivery);
      }
    }
  }

  private async deliver(record: CallbackRecord, body: string): Promise<void> {
    const { url, maxAttempts, retryBaseMs, timeoutMs } = this.settings;
    // A sender stopped, or no longer configured, sends nothing more: not even what was queued.
    if (url === undefined || this.controller.signal.aborted) return;
    const target = this.dialect.target({ ...this.settings, url });
    try {
      await pRetry(
        async () => {
          record.attempts++;
          const answer = await request(target.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...target.headers },
            body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            signal: this.controller.signal,
          });
          const text = await answer.body.text();
          if (!this.dialect.accepted(answer.statusCode, text)) {
            throw new Error(`partner answered HTTP ${answer.statusCode}: ${text.slice(0, 200)}`);
          }
        },
        {
          retries: maxAttempts - 1,
          minTimeout: retryBaseMs,
          factor: this.dialect.retryFactor,
          randomize: this.dialect.jitter,
          signal: this.controller.signal,
          shouldRetry: () => !this.controller.signal.aborted,
        },
      );
      if (record.outcome !== 'delivered') record.outcome = 'delivered';
    } catch (error) {
      record.lastError = error instanceof Error ? error.message : String(error);
      if (record.outcome !== 'delivered') record.outcome = 'failed';
      this.logger.warn(
        { transactionId: record.transactionId, attempts: record.attempts, error: record.lastError },
        'callback not delivered',
      );
    }
  }

  /** Resolves when every queued callback is delivered or given up. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  history(): CallbackRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  stop(): void {
    this.controller.abort();
  }
}
