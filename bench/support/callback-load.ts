/**
 * Drives a callback receiver at a fixed rate over keep-alive connections (undici): good callbacks,
 * exact resends of earlier ones (the carrier's retries), bad credentials and malformed bodies in fixed
 * shares, and records how each was answered. Bounded: `total` requests, each with a timeout.
 */
import { Pool } from 'undici';
import { callbackEventId, parseCarrierInstant } from '../../src/carriers/247express/contract.js';

export type LoadKind = 'good' | 'duplicate' | 'bad_credential' | 'not_json' | 'schema_breach' | 'oversized';

export interface LoadPlan {
  readonly total: number;
  readonly perSecond: number;
  /** Shares in hundredths: of every 100 requests, this many of each kind (the rest are good). */
  readonly perHundred: { readonly duplicate: number; readonly badCredential: number; readonly malformed: number };
  readonly keys: readonly string[];
  /** Makes the order codes of this load distinct from another's. */
  readonly orderPrefix: string;
  /** Called as each request is answered (or fails), with how many were acknowledged so far. */
  readonly onAnswered?: (acknowledged: number) => void;
  readonly connections?: number;
}

export interface LoadOutcome {
  readonly kind: LoadKind;
  /** The identity the receiver gives the event (good and duplicate requests). */
  readonly eventId: string | null;
  /** HTTP status, or null when the request got no answer (connection refused or cut). */
  readonly status: number | null;
  readonly accepted: boolean;
  readonly latencyMs: number;
}

export interface LoadReport {
  readonly outcomes: LoadOutcome[];
  readonly durationMs: number;
  /** Requests sent per second over the run. */
  readonly sendRate: number;
}

const STATUSES = ['21', '23', '24', '25', '16', '30'];

function goodBody(index: number, plan: LoadPlan): { body: Record<string, unknown>; eventId: string } {
  const status = STATUSES[index % STATUSES.length]!;
  const time = new Date(Date.UTC(2026, 10, 20, 0, 0, 0) + index * 1_000 + (index % 997))
    .toISOString()
    .replace('Z', '1234+00:00');
  // Every fifth event without a TransactionId: its identity is the hash of order, status and time.
  const transactionId = index % 5 === 0 ? null : `${plan.orderPrefix}-T${index}`;
  const body = {
    Time: time,
    TransactionId: transactionId,
    DeliveryDate: status === '30' ? '2026-11-20 12:00:00' : null,
    ReceiverName: null,
    Mailman: 'Lê Văn C',
    DeliveryNotes: null,
    DelayNotes: status === '16' ? 'Người nhận vắng nhà' : null,
    RequestFeedbackCount: 0,
    Description: 'load',
    Status: status,
    StatusName: null,
    OrderCode: `${plan.orderPrefix}${String(index).padStart(8, '0')}`,
    ApiKey: plan.keys[index % plan.keys.length],
    DelayCode: status === '16' ? '13' : null,
    ExternalCode: null,
    ReferenceCode: null,
  };
  const eventId = callbackEventId({
    TransactionId: transactionId,
    OrderCode: body.OrderCode,
    Status: status,
    Time: parseCarrierInstant(time)!,
  });
  return { body, eventId };
}

export async function runCallbackLoad(url: string, plan: LoadPlan): Promise<LoadReport> {
  const pool = new Pool(url, { connections: plan.connections ?? 64, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const sentGood: { text: string; eventId: string }[] = [];
  const outcomes: Promise<LoadOutcome>[] = [];
  let acknowledged = 0;
  const started = performance.now();
  const { duplicate, badCredential, malformed } = plan.perHundred;
  try {
    for (let i = 0; i < plan.total; i++) {
      const due = started + (i * 1000) / plan.perSecond;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const slot = i % 100;
      let kind: LoadKind = 'good';
      let text: string;
      let eventId: string | null = null;
      if (slot < duplicate && sentGood.length > 0) {
        kind = 'duplicate';
        const earlier = sentGood[(i * 7919) % sentGood.length]!;
        text = earlier.text;
        eventId = earlier.eventId;
      } else if (slot >= duplicate && slot < duplicate + badCredential) {
        kind = 'bad_credential';
        text = JSON.stringify({ ...goodBody(i, plan).body, ApiKey: `wrong-${i}` });
      } else if (slot >= duplicate + badCredential && slot < duplicate + badCredential + malformed) {
        const variant = Math.floor(i / 100) % 3;
        const { body } = goodBody(i, plan);
        if (variant === 0) {
          kind = 'not_json';
          text = JSON.stringify(body).slice(0, 40);
        } else if (variant === 1) {
          kind = 'schema_breach';
          text = JSON.stringify({ ...body, Time: 'yesterday' });
        } else {
          kind = 'oversized';
          text = JSON.stringify({ ...body, Description: 'x'.repeat(70 * 1024) });
        }
      } else {
        const good = goodBody(i, plan);
        text = JSON.stringify(good.body);
        eventId = good.eventId;
        sentGood.push({ text, eventId });
      }
      const sentAt = performance.now();
      outcomes.push(
        pool
          .request({
            path: '/IntergrationAPI',
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: text,
          })
          .then(async (answer) => {
            const reply = await answer.body.text();
            const accepted = answer.statusCode === 200 && (JSON.parse(reply) as { IsError: boolean }).IsError === false;
            return { kind, eventId, status: answer.statusCode, accepted, latencyMs: performance.now() - sentAt };
          })
          .catch(
            (): LoadOutcome => ({
              kind,
              eventId,
              status: null,
              accepted: false,
              latencyMs: performance.now() - sentAt,
            }),
          )
          .then((outcome) => {
            if (outcome.accepted) acknowledged++;
            plan.onAnswered?.(acknowledged);
            return outcome;
          }),
      );
    }
    const sendRate = plan.total / ((performance.now() - started) / 1000);
    const settled = await Promise.all(outcomes);
    return { outcomes: settled, durationMs: performance.now() - started, sendRate };
  } finally {
    await pool.destroy();
  }
}

/** The p-th percentile (0 to 100) of the answered requests' latencies. */
export function latencyPercentile(outcomes: readonly LoadOutcome[], p: number): number {
  const sorted = outcomes
    .filter((o) => o.status !== null)
    .map((o) => o.latencyMs)
    .sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
