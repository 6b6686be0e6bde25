/**
 * A carrier is its definition: a third carrier's tracking, declared as contract code, is looked up by
 * the product's one tracker over real HTTP, with no tracker of its own; and its sandbox is one
 * declaration, served beside the others with its world, webhooks, faults and control routes.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CarrierDefinition } from '../../src/carriers/carrier-definition.js';
import type { CarrierTracking } from '../../src/carriers/carrier-tracking.js';
import { DefinedCarrierTracker } from '../../src/carriers/client/carrier-tracker.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import { MalformedAnswerFailure } from '../../src/carriers/client/lookup-failures.js';
import { GHN } from '../../src/carriers/ghn/carrier.js';
import { DEFAULT_CARRIER_ID, KNOWN_CARRIERS } from '../../src/carriers/known-carriers.js';
import type { PayloadCheck } from '../../src/carriers/payload-validation.js';
import { SANDBOX_CARRIER as GHN_SANDBOX } from '../../src/sandbox/carriers/ghn/sandbox-carrier.js';
import type { SandboxCarrier } from '../../src/sandbox/carriers/sandbox-carrier.js';
import { SANDBOX_CARRIERS, sandboxCarrierOf } from '../../src/sandbox/carriers/sandbox-carriers.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/sandbox.js';
import { respond } from '../../src/sandbox/server/faulty-answer.js';

const TOKEN = 'ghtk-token-7d1e0c5a-2b9f-4c33-8e61-a4f0d2b7c915';

interface ThirdAnswer {
  readonly success: boolean;
  readonly message: string;
  readonly order?: { readonly label: string; readonly status: string };
}

/** The fake carrier's answer: `success`, a message, and the order when found. */
function checkThirdAnswer(value: unknown): PayloadCheck<ThirdAnswer> {
  const answer = value as Partial<ThirdAnswer> | null;
  if (typeof answer !== 'object' || answer === null || typeof answer.success !== 'boolean')
    return { ok: false, message: 'success: expected a boolean' };
  if (answer.success && typeof answer.order?.label !== 'string')
    return { ok: false, message: 'order.label: expected a string' };
  return { ok: true, value: answer as ThirdAnswer };
}

/** A third carrier's lookup: one GET by label with its token in a header, errors answered with HTTP 400. */
const THIRD_TRACKING: CarrierTracking = {
  async lookup(account, orderCode, call) {
    const answer = await call(
      {
        method: 'GET',
        path: `/services/shipment/v2/${encodeURIComponent(orderCode)}`,
        headers: { token: account.key, 'x-shop': account.shop ?? '' },
        clientErrorsAnswer: true,
      },
      checkThirdAnswer,
    );
    const { success, message, order } = answer.value;
    if (success && order) return { kind: 'snapshot', orderCode: order.label, body: answer.body };
    const refused = message.startsWith('token');
    return {
      kind: 'carrier_error',
      errorCode: refused ? 'THIRD_TOKEN_REFUSED' : 'THIRD_NOT_FOUND',
      errorMessage: message,
      effect: refused ? 'key_refused' : 'final',
      body: answer.body,
    };
  },
  spooled(decoded) {
    const checked = checkThirdAnswer(decoded);
    if (!checked.ok) return { kind: 'unreadable' };
    const { success, order } = checked.value;
    return success && order ? { kind: 'snapshot', orderCode: order.label } : { kind: 'carrier_error' };
  },
};

const THIRD_CARRIER: CarrierDefinition = { ...GHN, id: 'third', name: 'Third', tracking: THIRD_TRACKING };

let server: Server | undefined;
let tracker: DefinedCarrierTracker | undefined;
let sandbox: RunningSandbox | undefined;
afterEach(async () => {
  await tracker?.close();
  await sandbox?.stop();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = tracker = sandbox = undefined;
});

/** A server on loopback answering each request with what `answer` gives; its address. */
async function loopbackServer(
  answer: (request: IncomingMessage, body: string) => { status: number; body: string },
  seen: IncomingMessage[],
): Promise<string> {
  server = createServer(async (request, response) => {
    seen.push(request);
    let text = '';
    for await (const chunk of request) text += chunk;
    const { status, body } = answer(request, text);
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The third carrier on loopback below `/api`, answering each request with what `answer` gives. */
async function thirdCarrier(
  answer: (request: IncomingMessage) => { status: number; body: string },
  seen: IncomingMessage[],
): Promise<string> {
  return `${await loopbackServer(answer, seen)}/api`;
}

/** The third carrier's sandbox: its lookup by label below `/third/api`, and a webhook of each status change. */
const THIRD_SANDBOX: SandboxCarrier = {
  id: 'third',
  name: 'Third',
  basePath: '/third/api',
  world: { ordersPerAccount: 12, codePrefix: 'T' },
  webhooks: {
    dialect: {
      seedName: 'third-webhook',
      callbacksOf: (plan, eventIndex) => {
        const event = plan.events[eventIndex]!;
        const time = new Date(event.at).toISOString();
        return [
          {
            id: `${plan.code}|${eventIndex}`,
            status: event.status,
            time,
            delayCode: null,
            body: { label: plan.code, status: event.status, time },
          },
        ];
      },
      target: ({ url }) => ({ url, headers: {} }),
      accepted: (statusCode) => statusCode === 200,
      retryFactor: 1,
      jitter: false,
    },
    maxAttempts: 2,
    retryBaseMs: 100,
  },
  async handle(context, path, req, res, hanging) {
    const code = decodeURIComponent(path.slice('/third/api/services/shipment/v2/'.length));
    const account = context.world.findAccountByKey(String(req.headers.token));
    const plan = context.world.findOrder(code);
    const known = account !== undefined && plan?.account.index === account.index;
    const json = known
      ? JSON.stringify({ success: true, message: '', order: { label: code, status: plan.events.at(-1)!.status } })
      : JSON.stringify({ success: false, message: account ? 'order not found' : 'token refused' });
    return respond(context, 'third', code, { status: known ? 200 : 400, json, orderCode: code }, res, hanging);
  },
  shopOf: (account) => String(900 + account.index),
  anomalies: (world, now) =>
    [...world.orders()]
      .filter((plan) => plan.anomaly !== null)
      .map((plan) => ({
        orderCode: plan.code,
        account: plan.account.alias,
        kind: plan.anomaly!,
        check: 'lines_sum',
        observableFrom: null,
        observableNow: plan.createdAt <= now,
      })),
};

function trackerOf(url: string): DefinedCarrierTracker {
  const keys = new KeyRing(
    [
      ['shop', TOKEN],
      ['stranger', 'not-a-token'],
    ],
    new Map([['shop', '885']]),
  );
  return new DefinedCarrierTracker(
    THIRD_CARRIER,
    { trackingUrl: url, timeoutMs: 2_000, maxAnswerBytes: 65_536, connections: 1 },
    keys,
  );
}

describe("a third carrier's tracking, declared in its definition", () => {
  it('looks an order up through the one tracker: its request as declared, its answer read as declared', async () => {
    const seen: IncomingMessage[] = [];
    const sent = '{"success":true,"message":"","order":{"label":"S885.A1.9921","status":"5"}}';
    tracker = trackerOf(await thirdCarrier(() => ({ status: 200, body: sent }), seen));

    const answer = await tracker.lookup('shop', 'S885.A1.9921');

    expect(answer).toEqual({ kind: 'snapshot', orderCode: 'S885.A1.9921', body: Buffer.from(sent) });
    expect(
      seen.map((request) => [request.method, request.url, request.headers.token, request.headers['x-shop']]),
    ).toEqual([['GET', '/api/services/shipment/v2/S885.A1.9921', TOKEN, '885']]);
  });

  it('classifies an error answer by the definition, with every configured token cleared out of what is kept', async () => {
    const seen: IncomingMessage[] = [];
    const url = await thirdCarrier(
      (request) =>
        request.headers.token === TOKEN
          ? { status: 404, body: '{"success":false,"message":"order not found"}' }
          : {
              status: 401,
              body: `{"success":false,"message":"token ${String(request.headers.token)} refused; ${TOKEN}"}`,
            },
      seen,
    );
    tracker = trackerOf(url);

    expect(await tracker.lookup('shop', 'S885.A1.1')).toMatchObject({
      kind: 'carrier_error',
      errorCode: 'THIRD_NOT_FOUND',
      effect: 'final',
    });
    const refused = await tracker.lookup('stranger', 'S885.A1.1');
    expect(refused).toMatchObject({
      kind: 'carrier_error',
      errorCode: 'THIRD_TOKEN_REFUSED',
      errorMessage: 'token [redacted] refused; [redacted]',
      effect: 'key_refused',
    });
    expect(refused.body.toString()).not.toContain(TOKEN);
    expect(refused.body.toString()).not.toContain('not-a-token');
  });

  it('fails the lookup as malformed when the definition refuses the answer', async () => {
    tracker = trackerOf(await thirdCarrier(() => ({ status: 200, body: '{"success":true}' }), []));
    const failure = await tracker.lookup('shop', 'S885.A1.2').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MalformedAnswerFailure);
    expect(failure).toMatchObject({
      code: 'LOOKUP_MALFORMED',
      message: "the carrier's answer is malformed: order.label: expected a string",
    });
  });
});

describe("a third carrier's sandbox, declared as one plug-in", () => {
  it("is found by the carrier's id for every known carrier the sandbox does not serve at its root", () => {
    expect(SANDBOX_CARRIERS.map((carrier) => carrier.id)).toEqual(
      KNOWN_CARRIERS.map((carrier) => carrier.id).filter((id) => id !== DEFAULT_CARRIER_ID),
    );
    expect(SANDBOX_CARRIERS).toContain(GHN_SANDBOX);
  });

  it('names the missing folder of a carrier that has no sandbox', async () => {
    await expect(sandboxCarrierOf('ghtk')).rejects.toThrow(
      'the sandbox serves no carrier ghtk: src/sandbox/carriers/ghtk/sandbox-carrier.ts must export its SANDBOX_CARRIER',
    );
  });

  async function startWithThird(): Promise<RunningSandbox> {
    sandbox = await startSandbox(
      { accounts: 2, historyDays: 3, lifecycle: { anomalyRate: 0.5 }, carriers: { third: { ordersPerAccount: 20 } } },
      undefined,
      [GHN_SANDBOX, THIRD_SANDBOX],
    );
    return sandbox;
  }

  it("serves its API below its base path from a world of its own, which the product's tracker reads", async () => {
    const running = await startWithThird();
    const third = running.state.carrier('third');
    expect(third.world.options.ordersPerAccount).toBe(20);
    const plan = [...third.world.orders(0)].find((order) => order.createdAt <= running.state.clock.now())!;
    expect(plan.code.startsWith('T')).toBe(true);
    const keys = new KeyRing(
      third.world.accounts.map((account) => [account.alias, account.apiKey] as const),
      new Map(third.world.accounts.map((account) => [account.alias, THIRD_SANDBOX.shopOf!(account)])),
    );
    tracker = new DefinedCarrierTracker(
      THIRD_CARRIER,
      { trackingUrl: `${running.url}/third/api`, timeoutMs: 2_000, maxAnswerBytes: 65_536, connections: 1 },
      keys,
    );
    const answer = await tracker.lookup(plan.account.alias, plan.code);
    expect(answer).toMatchObject({ kind: 'snapshot', orderCode: plan.code });
    // Its orders are not 247Express's or GHN's: those worlds do not know the code.
    expect(running.state.world.findOrder(plan.code)).toBeUndefined();
    expect(running.state.carrier('ghn').world.findOrder(plan.code)).toBeUndefined();

    // A fault scripted for its operation hits its next call.
    const scripted = await fetch(`${running.url}/_sandbox/faults/script`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'server_error', operation: 'third' }),
    });
    expect(scripted.status).toBe(200);
    await expect(tracker.lookup(plan.account.alias, plan.code)).rejects.toMatchObject({ code: 'LOOKUP_HTTP_STATUS' });
    expect(await tracker.lookup(plan.account.alias, plan.code)).toMatchObject({ kind: 'snapshot' });
  });

  it('shows its accounts and settings, sends its webhooks, and serves its truth at the control routes', async () => {
    const received: string[] = [];
    const endpoint = await loopbackServer((_request, body) => {
      received.push(body);
      return { status: 200, body: '{}' };
    }, []);
    const running = await startWithThird();

    const state = (await (await fetch(`${running.url}/_sandbox/state`)).json()) as {
      carriers: Record<string, { basePath: string; accounts: { alias: string; shop: string }[] }>;
    };
    expect(Object.keys(state.carriers)).toEqual(['ghn', 'third']);
    expect(state.carriers.third!.basePath).toBe('/third/api');
    expect(state.carriers.third!.accounts.map((account) => account.shop)).toEqual(['900', '901']);

    const configured = await fetch(`${running.url}/_sandbox/third/webhooks`, {
      method: 'POST',
      body: JSON.stringify({ url: `${endpoint}/hook?token=secret-of-the-shop` }),
    });
    expect(await configured.json()).toMatchObject({ url: `${endpoint}/hook`, maxAttempts: 2 });
    await fetch(`${running.url}/_sandbox/clock`, { method: 'POST', body: JSON.stringify({ advanceDays: 1 }) });
    await fetch(`${running.url}/_sandbox/third/webhooks/flush`, { method: 'POST' });
    const truth = (await (await fetch(`${running.url}/_sandbox/truth/third/webhooks`)).json()) as { id: string }[];
    expect(truth.length).toBeGreaterThan(0);
    expect(received).toHaveLength(truth.length);
    const labels = new Set(received.map((body) => (JSON.parse(body) as { label: string }).label));
    for (const label of labels) expect(running.state.carrier('third').world.findOrder(label)).toBeDefined();

    const anomalies = (await (await fetch(`${running.url}/_sandbox/truth/anomalies?carrier=third`)).json()) as {
      orderCode: string;
      check: string;
    }[];
    const planted = [...running.state.carrier('third').world.orders()].filter((plan) => plan.anomaly !== null);
    expect(planted.length).toBeGreaterThan(0);
    expect(anomalies.map((anomaly) => anomaly.orderCode)).toEqual(planted.map((plan) => plan.code));
    expect((await fetch(`${running.url}/_sandbox/truth/anomalies?carrier=fourth`)).status).toBe(404);
  });
});
