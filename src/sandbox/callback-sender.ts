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

export interface CallbackSettings {
  /** The partner's own address; callbacks go to `${url}/IntergrationAPI`. Unset: none are sent. */
  readonly url?: string | undefined;
  readonly auth: 'apikey' | 'basic';
  readonly basicUser?: string | undefined;
  readonly basicPassword?: string | undefined;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly timeoutMs: number;
  readonly concurrency: number;
  /** Share of status changes the sandbox never sends (to test missed-callback detection). */
  readonly dropRate: number;
  /** Share of callbacks sent twice, as a carrier's retry would. */
  readonly duplicateRate: number;
}

export type CallbackOutcome = 'pending' | 'delivered' | 'dropped' | 'failed';

export interface CallbackRecord {
  readonly transactionId: string;
  readonly orderCode: string;
  readonly account: string;
  readonly status: string;
  readonly time: string;
  readonly delayCode: string | null;
  outcome: CallbackOutcome;
  attempts: number;
  duplicated: boolean;
  lastError: string | null;
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

/**
 * Sends one POST per status change to the partner's endpoint as the sandbox's clock passes it,
 * retrying with exponential backoff until the partner answers IsError false. Every change is recorded
 * with its outcome so tests can check what the partner should hold.
 */
export class CallbackSender {
  private cursor: number;
  private readonly records: CallbackRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly controller = new AbortController();

  constructor(
    private readonly world: SandboxWorld,
    private readonly clock: SandboxClock,
    private settings: CallbackSettings,
    private readonly logger: Logger,
  ) {
    this.cursor = clock.now();
    this.limit = pLimit(settings.concurrency);
  }

  configure(settings: Partial<CallbackSettings>): void {
    this.settings = { ...this.settings, ...settings };
  }

  get current(): CallbackSettings {
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
    const event = plan.events[index]!;
    const transactionId = transactionIdOf(plan, index);
    const rng = new SeededRandom(deriveSeed(this.world.options.seed, 'callback', transactionId));
    const dropped = rng.chance(this.settings.dropRate);
    const duplicated = !dropped && rng.chance(this.settings.duplicateRate);
    const record: CallbackRecord = {
      transactionId,
      orderCode: plan.code,
      account: plan.account.alias,
      status: event.status,
      time: formatCarrierDateTime(event.at),
      delayCode: event.delayCode,
      outcome: dropped ? 'dropped' : 'pending',
      attempts: 0,
      duplicated,
      lastError: null,
    };
    this.records.push(record);
    if (dropped) return;
    const body = JSON.stringify(callbackMessage(plan, index, this.settings.auth === 'apikey'));
    const sends = duplicated ? 2 : 1;
    for (let i = 0; i < sends; i++) {
      const delivery = this.limit(() => this.deliver(record, body)).finally(() => this.inFlight.delete(delivery));
      this.inFlight.add(delivery);
    }
  }

  private async deliver(record: CallbackRecord, body: string): Promise<void> {
    const { url, maxAttempts, retryBaseMs, timeoutMs } = this.settings;
    try {
      await pRetry(
        async () => {
          record.attempts++;
          const answer = await request(`${url}${CALLBACK_PATH}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...this.authHeader() },
            body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            signal: this.controller.signal,
          });
          const text = await answer.body.text();
          const parsed = CallbackAnswerSchema.safeParse(safeJson(text));
          if (answer.statusCode >= 300 || !parsed.success || parsed.data.IsError) {
            throw new Error(`partner answered HTTP ${answer.statusCode}: ${text.slice(0, 200)}`);
          }
        },
        {
          retries: maxAttempts - 1,
          minTimeout: retryBaseMs,
          factor: 2,
          randomize: true,
          signal: this.controller.signal,
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

  private authHeader(): Record<string, string> {
    const { auth, basicUser, basicPassword } = this.settings;
    if (auth !== 'basic') return {};
    return { authorization: `Basic ${Buffer.from(`${basicUser ?? ''}:${basicPassword ?? ''}`).toString('base64')}` };
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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
