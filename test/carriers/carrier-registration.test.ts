/**
 * A carrier is its definition: a third carrier's tracking, declared as contract code, is looked up by
 * the product's one tracker over real HTTP, with no tracker of its own.
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
import type { PayloadCheck } from '../../src/carriers/payload-validation.js';

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
afterEach(async () => {
  await tracker?.close();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = tracker = undefined;
});

/** The third carrier on loopback below `/api`, answering each request with what `answer` gives. */
async function thirdCarrier(
  answer: (request: IncomingMessage) => { status: number; body: string },
  seen: IncomingMessage[],
): Promise<string> {
  server = createServer((request, response) => {
    seen.push(request);
    const { status, body } = answer(request);
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}

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
