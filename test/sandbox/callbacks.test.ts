/**
 * The sandbox's status callbacks, received by a partner endpoint started here: exactly the status
 * changes the clock passed, each a valid message authenticated as configured; retried until the
 * partner accepts; dropped and duplicated as configured, as truth/callbacks records.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CALLBACK_PATH,
  type CallbackMessage,
  CallbackMessageSchema,
  findOrderStatus,
  STATUS,
} from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import type { SandboxOptionsInput } from '../../src/sandbox/sandbox-options.js';
import {
  DAY_MS,
  epochOf,
  HOUR_MS,
  keysOf,
  postControl,
  startTestSandbox,
  truthCallbacks,
  truthOrders,
} from './sandbox-http.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  raw: Record<string, unknown>;
  message: CallbackMessage;
}

type PartnerAnswer = { status: number; body: unknown };

const ACCEPTED: PartnerAnswer = { status: 200, body: { IsError: false, ErrorMessage: '' } };

/** A partner endpoint: records every callback and answers as `answer` says (by attempt of that transaction, from 1). */
class PartnerEndpoint {
  readonly deliveries: Delivery[] = [];
  readonly strayRequests: string[] = [];
  private readonly attempts = new Map<string, number>();
  private server: Server | undefined;
  url = '';

  constructor(private readonly answer: (attempt: number) => PartnerAnswer = () => ACCEPTED) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== CALLBACK_PATH) {
          this.strayRequests.push(`${req.method} ${req.url}`);
          res.writeHead(404).end();
          return;
        }
        const raw = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        this.deliveries.push({ headers: req.headers, raw, message: CallbackMessageSchema.parse(raw) });
        const id = String(raw.TransactionId);
        const attempt = (this.attempts.get(id) ?? 0) + 1;
        this.attempts.set(id, attempt);
        const { status, body } = this.answer(attempt);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Each callback accepted, once per transaction (the last attempt of each). */
  accepted(): Delivery[] {
    const last = new Map<string, Delivery>();
    for (const d of this.deliveries) last.set(String(d.raw.TransactionId), d);
    return [...last.values()];
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** What identifies one status change: order, status and time to the millisecond. */
function changeKey(orderCode: string, status: string, time: string): string {
  return `${orderCode}|${status}|${epochOf(time)}`;
}

/** The status changes the truth shows in (from, to], each with its order. */
function changesBetween(orders: OrderTruth[], from: number, to: number) {
  return orders.flatMap((o) =>
    o.events
      .filter((e) => epochOf(e.time) > from && epochOf(e.time) <= to)
      .map((e) => ({ order: o, event: e, key: changeKey(o.orderCode, e.status, e.time) })),
  );
}

const running: { sandbox?: RunningSandbox; partner?: PartnerEndpoint }[] = [];

afterEach(async () => {
  // The sandbox first: it may still be sending to the partner.
  for (const { sandbox, partner } of running.splice(0).reverse()) {
    await sandbox?.stop();
    await partner?.stop();
  }
});

async function setUp(callbacks: SandboxOptionsInput['callbacks'], answer?: (attempt: number) => PartnerAnswer) {
  const partner = await new PartnerEndpoint(answer).start();
  running.push({ partner });
  const sandbox = await startTestSandbox({
    seed: 21,
    ordersPerAccount: 100,
    callbacks: { url: partner.url, retryBaseMs: 5, maxAttempts: 3, ...callbacks },
  });
  running.push({ sandbox });
  return { partner, sandbox, start: sandbox.state.clock.now() };
}

/** Moves the clock forward over HTTP and waits until every callback it queued is delivered or given up. */
async function advance(sandbox: RunningSandbox, ms: number): Promise<number> {
  const moved = await postControl<{ callbacksQueued: number }>(sandbox, '/_sandbox/clock', { advanceMs: ms });
  await sandbox.state.callbacks.idle();
  return moved.callbacksQueued;
}

describe('status callbacks', () => {
  it('sends exactly the status changes of the advanced day, each a valid message with its account key', async () => {
    const { partner, sandbox, start } = await setUp({ auth: 'apikey' });
    expect(await advance(sandbox, 0)).toBe(0);
    const queued = await advance(sandbox, DAY_MS);
    const expected = changesBetween(await truthOrders(sandbox), start, start + DAY_MS);
    expect(expected.length).toBeGreaterThan(20);
    expect(queued).toBe(expected.length);

    expect(partner.strayRequests).toEqual([]);
    expect(partner.deliveries.length).toBe(expected.length);
    const byKey = new Map(expected.map((x) => [x.key, x]));
    const keys = keysOf(sandbox);
    for (const { headers, message } of partner.deliveries) {
      const change = byKey.get(changeKey(message.OrderCode, message.Status, message.Time));
      expect(change, `${message.OrderCode} ${message.Status} ${message.Time}`).toBeDefined();
      byKey.delete(change!.key);
      expect(headers['content-type']).toMatch(/^application\/json/);
      expect(headers.authorization).toBeUndefined();
      expect(message.ApiKey).toBe(keys[change!.order.account]);
      expect(message.StatusName).toBe(findOrderStatus(message.Status)!.name);
      expect(message.DelayCode ?? null).toBe(change!.event.delayCode);
      if (message.Status === STATUS.AWAITING_HANDLING) expect(message.DelayNotes).toBeTruthy();
      if (message.Status === STATUS.DELIVERED) expect(message.DeliveryDate).toBeTruthy();
      else expect(message.DeliveryDate ?? null).toBeNull();
    }
    expect(byKey.size).toBe(0);

    const records = await truthCallbacks(sandbox);
    expect(records.length).toBe(expected.length);
    expect(new Set(records.map((r) => r.transactionId)).size).toBe(records.length);
    expect(records.every((r) => r.outcome === 'delivered' && r.attempts === 1)).toBe(true);
  });

  it('sends each change once: a second day brings only that day', async () => {
    const { partner, sandbox, start } = await setUp({});
    await advance(sandbox, DAY_MS);
    const firstDay = partner.deliveries.length;
    await advance(sandbox, 12 * HOUR_MS);
    const expected = changesBetween(await truthOrders(sandbox), start, start + DAY_MS + 12 * HOUR_MS);
    expect(partner.deliveries.length).toBeGreaterThan(firstDay);
    const received = partner.deliveries.map(({ message: m }) => changeKey(m.OrderCode, m.Status, m.Time));
    expect(new Set(received).size).toBe(received.length);
    expect(received.sort()).toEqual(expected.map((x) => x.key).sort());
  });

  it('authenticates with HTTP Basic instead when so configured, without ApiKey in the body', async () => {
    const { partner, sandbox } = await setUp({ auth: 'basic', basicUser: 'partner', basicPassword: 'pa:ss wörd' });
    await advance(sandbox, 12 * HOUR_MS);
    expect(partner.deliveries.length).toBeGreaterThan(0);
    const expected = `Basic ${Buffer.from('partner:pa:ss wörd').toString('base64')}`;
    for (const { headers, raw } of partner.deliveries) {
      expect(headers.authorization).toBe(expected);
      expect('ApiKey' in raw).toBe(false);
    }
  });

  it('switches to HTTP Basic through /_sandbox/callbacks, and a later patch keeps it', async () => {
    const { partner, sandbox } = await setUp({ auth: 'apikey' });
    await postControl(sandbox, '/_sandbox/callbacks', { auth: 'basic', basicUser: 'u', basicPassword: 'p' });
    const settings = await postControl<Record<string, unknown>>(sandbox, '/_sandbox/callbacks', { duplicateRate: 0 });
    expect(settings).toMatchObject({ auth: 'basic', basicUser: 'u', url: partner.url, retryBaseMs: 5 });
    expect(settings.basicPassword).toBeUndefined();
    await advance(sandbox, 6 * HOUR_MS);
    expect(partner.deliveries.length).toBeGreaterThan(0);
    for (const { headers } of partner.deliveries)
      expect(headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it.each([
    ['answers IsError true', { status: 200, body: { IsError: true, ErrorMessage: 'busy' } }],
    ['answers HTTP 500', { status: 500, body: { message: 'down' } }],
  ] as const)('retries a callback whose partner first %s, and records it delivered', async (_, refusal) => {
    const { partner, sandbox } = await setUp({}, (attempt) => (attempt === 1 ? refusal : ACCEPTED));
    const queued = await advance(sandbox, 12 * HOUR_MS);
    expect(queued).toBeGreaterThan(0);
    expect(partner.deliveries.length).toBe(2 * queued);
    expect(partner.accepted().length).toBe(queued);
    const records = await truthCallbacks(sandbox);
    expect(records.length).toBe(queued);
    for (const r of records) expect([r.outcome, r.attempts]).toEqual(['delivered', 2]);
  });

  it('gives up after maxAttempts and records the callback failed', async () => {
    const { partner, sandbox } = await setUp({ maxAttempts: 3 }, () => ({ status: 503, body: {} }));
    const queued = await advance(sandbox, 6 * HOUR_MS);
    expect(queued).toBeGreaterThan(0);
    expect(partner.deliveries.length).toBe(3 * queued);
    for (const r of await truthCallbacks(sandbox)) {
      expect([r.outcome, r.attempts]).toEqual(['failed', 3]);
      expect(r.lastError).toContain('503');
    }
  });

  it('never sends the dropped changes, and lists them as dropped', async () => {
    const { partner, sandbox, start } = await setUp({ dropRate: 0.3 });
    await advance(sandbox, DAY_MS);
    const records = await truthCallbacks(sandbox);
    const dropped = records.filter((r) => r.outcome === 'dropped');
    expect(dropped.length).toBeGreaterThan(0);
    expect(dropped.length).toBeLessThan(records.length);
    expect(records.filter((r) => r.outcome !== 'dropped').every((r) => r.outcome === 'delivered')).toBe(true);
    const droppedKeys = new Set(dropped.map((r) => changeKey(r.orderCode, r.status, r.time)));
    const received = partner.deliveries.map(({ message: m }) => changeKey(m.OrderCode, m.Status, m.Time));
    for (const key of received) expect(droppedKeys.has(key)).toBe(false);
    // What arrived and what was dropped together make up the day.
    const expected = changesBetween(await truthOrders(sandbox), start, start + DAY_MS).map((x) => x.key);
    expect([...received, ...droppedKeys].sort()).toEqual(expected.sort());
    expect(dropped.every((r) => r.attempts === 0)).toBe(true);
  });

  it('sends the duplicated changes twice with the same TransactionId and body, the others once', async () => {
    const { partner, sandbox } = await setUp({ duplicateRate: 0.3 });
    await advance(sandbox, DAY_MS);
    const records = await truthCallbacks(sandbox);
    const duplicated = records.filter((r) => r.duplicated);
    expect(duplicated.length).toBeGreaterThan(0);
    expect(duplicated.length).toBeLessThan(records.length);
    const bodies = new Map<string, string[]>();
    for (const { raw } of partner.deliveries)
      bodies.set(String(raw.TransactionId), [...(bodies.get(String(raw.TransactionId)) ?? []), JSON.stringify(raw)]);
    for (const r of records) {
      const sent = bodies.get(r.transactionId) ?? [];
      expect(sent.length, r.transactionId).toBe(r.duplicated ? 2 : 1);
      expect(new Set(sent).size).toBe(1);
      expect(r.outcome).toBe('delivered');
    }
    expect(partner.deliveries.length).toBe(records.length + duplicated.length);
  });
});
