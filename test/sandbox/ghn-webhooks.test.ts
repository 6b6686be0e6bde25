/**
 * The sandbox's GHN webhooks, received by an endpoint started here: one per status change of GHN's
 * orders the clock passed (create, then switch_status), update_fee when a change moved the fees, each
 * a valid webhook by GHN's contract sent to the registered address as it is; one not answered 200 is
 * sent again after the fixed interval; GHN's webhooks stay apart from 247Express's callbacks.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findGhnFailureReason,
  type GhnWebhook,
  GhnWebhookSchema,
  ghnWebhookEventId,
} from '../../src/carriers/ghn/contract.js';
import type { CallbackRecord } from '../../src/sandbox/callback-sender.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { DAY_MS, getJson, postControl, startTestSandbox } from './sandbox-http.js';

interface Received {
  readonly url: string;
  readonly at: number;
  readonly webhook: GhnWebhook;
}

/** A shop's endpoint: keeps every webhook, answers 500 to the first attempt of each when `failFirst`. */
async function startEndpoint(failFirst: boolean) {
  const received: Received[] = [];
  const seen = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const webhook = GhnWebhookSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      received.push({ url: req.url ?? '', at: Date.now(), webhook });
      const id = ghnWebhookEventId(webhook);
      const fail = failFirst && !seen.has(id);
      seen.add(id);
      res.writeHead(fail ? 500 : 200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(failFirst: boolean, retryBaseMs: number) {
  const endpoint = await startEndpoint(failFirst);
  cleanups.push(endpoint.stop);
  const sandbox: RunningSandbox = await startTestSandbox({
    seed: 7,
    accounts: 2,
    ordersPerAccount: 5,
    lifecycle: { failedAttemptRate: 0.5 },
    carriers: {
      ghn: {
        ordersPerAccount: 40,
        webhooks: { url: `${endpoint.url}/ghn/webhook?token=shop-secret`, retryBaseMs, maxAttempts: 3 },
      },
    },
  });
  cleanups.push(() => sandbox.stop());
  return { endpoint, sandbox };
}

describe("the sandbox's GHN webhooks", () => {
  it('sends each status change of GHN orders as GHN does, to the registered address, fees updated when they change', async () => {
    const { endpoint, sandbox } = await setUp(false, 5);
    const start = sandbox.state.clock.now();
    await postControl(sandbox, '/_sandbox/clock', { advanceMs: 3 * DAY_MS });
    await postControl(sandbox, '/_sandbox/ghn/webhooks/flush');

    const truth = await getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/ghn/webhooks`);
    expect(truth.length).toBeGreaterThan(30);
    expect(truth.every((record) => record.outcome === 'delivered' && record.attempts === 1)).toBe(true);
    expect(endpoint.received.map((r) => ghnWebhookEventId(r.webhook)).sort()).toEqual(
      truth.map((record) => record.transactionId).sort(),
    );
    expect(new Set(endpoint.received.map((r) => r.url))).toEqual(new Set(['/ghn/webhook?token=shop-secret']));

    // Every status change the clock passed, of GHN's orders only.
    const ghnCodes = new Set([...sandbox.state.carrier('ghn').world.orders()].map((plan) => plan.code));
    const changes = [...sandbox.state.carrier('ghn').world.orders()].flatMap((plan) =>
      plan.events.filter((e) => e.at > start && e.at <= start + 3 * DAY_MS),
    );
    const statusWebhooks = endpoint.received.filter((r) => r.webhook.Type !== 'update_fee');
    expect(statusWebhooks).toHaveLength(changes.length);
    expect(endpoint.received.every((r) => ghnCodes.has(r.webhook.OrderCode))).toBe(true);

    const byType = (type: string) => endpoint.received.filter((r) => r.webhook.Type === type).map((r) => r.webhook);
    expect(byType('create').every((w) => w.Status === 'ready_to_pick')).toBe(true);
    expect(byType('switch_status').length).toBeGreaterThan(0);
    expect(byType('update_fee').length).toBeGreaterThan(0);
    const failed = byType('switch_status').filter((w) => w.Status === 'delivery_fail');
    expect(failed.length).toBeGreaterThan(0);
    for (const webhook of failed) expect(findGhnFailureReason(webhook.ReasonCode ?? '')?.leg).toBe('delivery');
    for (const { webhook } of endpoint.received) {
      const fees = webhook.Fee!;
      const parts = [fees.MainService, fees.Insurance, fees.StationDO, fees.StationPU, fees.Return, fees.R2S];
      expect(parts.reduce((sum, fee) => sum + Number(fee), -Number(fees.Coupon))).toBe(Number(webhook.TotalFee));
    }

    // 247Express's callbacks are not configured: none of its orders was sent.
    expect(await getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/callbacks`)).toEqual([]);
  });

  it('sends a webhook not answered 200 again after the fixed interval, and shows the address without its token', async () => {
    const { endpoint, sandbox } = await setUp(true, 300);
    await postControl(sandbox, '/_sandbox/clock', { advanceMs: DAY_MS / 4 });
    await postControl(sandbox, '/_sandbox/ghn/webhooks/flush');

    const truth = await getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/ghn/webhooks`);
    expect(truth.length).toBeGreaterThan(0);
    expect(truth.every((record) => record.outcome === 'delivered' && record.attempts === 2)).toBe(true);
    for (const record of truth) {
      const attempts = endpoint.received.filter((r) => ghnWebhookEventId(r.webhook) === record.transactionId);
      expect(attempts).toHaveLength(2);
      expect(attempts[1]!.webhook).toEqual(attempts[0]!.webhook);
      expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(290);
    }
    const state = await getJson<{ carriers: { ghn: { webhooks: { url: string } } } }>(`${sandbox.url}/_sandbox/state`);
    expect(state.carriers.ghn.webhooks.url).toBe(`${endpoint.url}/ghn/webhook`);
  });

  it('stops at once with webhooks still queued and failing: none is sent again after the stop', async () => {
    const endpoint = await startEndpoint(false);
    await endpoint.stop();
    const sandbox = await startTestSandbox({
      seed: 7,
      carriers: { ghn: { ordersPerAccount: 40, webhooks: { url: `${endpoint.url}/ghn/webhook`, retryBaseMs: 1_000 } } },
    });
    await postControl(sandbox, '/_sandbox/clock', { advanceMs: 3 * DAY_MS });
    const queued = sandbox.state.carrier('ghn').webhooks.history();
    expect(queued.length).toBeGreaterThan(8);
    const started = Date.now();
    await sandbox.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    const attempts = sandbox.state
      .carrier('ghn')
      .webhooks.history()
      .reduce((sum, record) => sum + record.attempts, 0);
    expect(attempts).toBeLessThanOrEqual(8);
  });
});
