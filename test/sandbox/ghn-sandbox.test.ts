/**
 * The sandbox's GHN API, through GHN's calls over real HTTP: envelopes, token and shop checks, the
 * status changes with their COD states as the clock moves, fees, and the injector's faults.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS } from '../../src/carriers/247express/contract.js';
import { neutralStatusOf } from '../../src/carriers/carrier-definition.js';
import type { CarrierAccount } from '../../src/carriers/carrier-tracking.js';
import { DefinedCarrierTracker } from '../../src/carriers/client/carrier-tracker.js';
import { CarrierTransport } from '../../src/carriers/client/carrier-transport.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import { HttpStatusFailure, RateLimitedFailure } from '../../src/carriers/client/lookup-failures.js';
import { GHN, type GhnOrderDetail } from '../../src/carriers/ghn/contract.js';
import { ghnDetail, ghnFees } from '../../src/carriers/ghn/tracking-lookup.js';
import { SETTLING_ERROR_CODES } from '../../src/carriers/known-carriers.js';
import { GHN_SANDBOX_BASE_PATH } from '../../src/sandbox/carriers/ghn/ghn-routes.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/sandbox.js';
import type { OrderPlan } from '../../src/sandbox/world/order-plan.js';

const DAY = 86_400_000;

describe("the sandbox's GHN API", () => {
  let sandbox: RunningSandbox;
  let transport: CarrierTransport;
  let account: CarrierAccount;
  const client = {
    detail: (asked: CarrierAccount, code: string) => ghnDetail(transport.call(), asked, code),
    fees: (asked: CarrierAccount, code: string) => ghnFees(transport.call(), asked, code),
  };

  beforeAll(async () => {
    sandbox = await startSandbox({
      accounts: 2,
      carriers: { ghn: { ordersPerAccount: 60 } },
      historyDays: 0,
      futureDays: 2,
    });
    const accounts = sandbox.state.carrier('ghn').world.accounts;
    const keys = new KeyRing(accounts.map((a) => [a.alias, a.apiKey] as const));
    transport = new CarrierTransport(
      {
        trackingUrl: `${sandbox.url}${GHN_SANDBOX_BASE_PATH}`,
        timeoutMs: 2_000,
        maxAnswerBytes: 1_048_576,
        connections: 2,
      },
      keys,
    );
    const shops = (await (await fetch(`${sandbox.url}/_sandbox/state`)).json()) as {
      carriers: { ghn: { accounts: { shop: string }[] } };
    };
    account = { key: accounts[0]!.apiKey, shop: shops.carriers.ghn.accounts[0]!.shop };
  });

  afterAll(async () => {
    await transport?.close();
    await sandbox?.stop();
  });

  const plans = (): OrderPlan[] => [...sandbox.state.carrier('ghn').world.orders(0)];

  async function detail(code: string): Promise<GhnOrderDetail> {
    const answer = await client.detail(account, code);
    if (answer.kind !== 'ok') throw new Error(answer.error.message);
    return answer.value;
  }

  it('answers an order not yet created as not found, settling the lookup', async () => {
    const later = plans().find((plan) => plan.createdAt > sandbox.state.clock.now())!;
    const answer = await client.detail(account, later.code);
    expect(answer.kind).toBe('carrier_error');
    if (answer.kind === 'carrier_error')
      expect([answer.errorKind.code, answer.errorKind.settles]).toEqual(['GHN_ORDER_NOT_FOUND', true]);
  });

  it('follows an order from creation to its end, COD collected on delivery and paid three days later', async () => {
    const delivered = plans().find(
      (plan) => plan.codAmount > 0 && plan.events.at(-1)!.status === '30' && plan.createdAt > sandbox.state.clock.now(),
    )!;
    sandbox.advance(delivered.createdAt - sandbox.state.clock.now());
    const fresh = await detail(delivered.code);
    expect([fresh.status, fresh.log, fresh.is_cod_collected]).toEqual(['ready_to_pick', [], false]);
    expect(neutralStatusOf(GHN, fresh.status)).toBe('pending');

    const deliveredAt = delivered.events.at(-1)!.at;
    sandbox.advance(deliveredAt - sandbox.state.clock.now());
    const done = await detail(delivered.code);
    expect(done.status).toBe('delivered');
    expect(done.log.at(-1)?.status).toBe('delivered');
    expect(done.log.length).toBe(delivered.events.length - 1);
    expect([done.is_cod_collected, done.is_cod_transferred, done.cod_transfer_date]).toEqual([true, false, null]);
    expect(done.cod_amount).toBe(String(delivered.codAmount));
    expect(done.finish_date).toBe(done.cod_collect_date);

    sandbox.advance(3 * DAY);
    const paid = await detail(delivered.code);
    expect(paid.is_cod_transferred).toBe(true);
    expect(Date.parse(paid.cod_transfer_date!) - Date.parse(paid.cod_collect_date!)).toBe(3 * DAY);
  });

  it("refuses a wrong token, another account's order and a wrong shop as GHN does", async () => {
    const code = plans().find((plan) => plan.createdAt <= sandbox.state.clock.now())!.code;
    const badToken = await client.detail({ ...account, key: 'not-a-token' }, code);
    expect(badToken.kind === 'carrier_error' && badToken.errorKind.code).toBe('GHN_TOKEN_REFUSED');
    const other = [...sandbox.state.carrier('ghn').world.orders(1)].find(
      (plan) => plan.createdAt <= sandbox.state.clock.now(),
    )!;
    const notOurs = await client.detail(account, other.code);
    expect(notOurs.kind === 'carrier_error' && notOurs.errorKind.code).toBe('GHN_ORDER_NOT_FOUND');
    const badShop = await client.fees({ ...account, shop: '1' }, code);
    expect(badShop.kind === 'carrier_error' && badShop.errorKind.code).toBe('GHN_SHOP_REFUSED');
  });

  it('answers fees whose payment is the sum of the fee lines, and the lookup by the shop’s own code as a list', async () => {
    const plan = plans().find((p) => p.createdAt <= sandbox.state.clock.now() && p.externalCode !== null)!;
    const fees = await client.fees(account, plan.code);
    if (fees.kind !== 'ok') throw new Error(fees.error.message);
    const lines = Object.values(fees.value.detail).map(Number);
    expect(fees.value.payment.map((p) => Number(p.value))).toEqual(
      fees.value.payment.length === 0 ? [] : [lines.reduce((a, b) => a + b, 0)],
    );
    const byClientCode = await fetch(`${sandbox.url}${GHN_SANDBOX_BASE_PATH}/v2/shipping-order/detail-by-client-code`, {
      method: 'POST',
      headers: { token: account.key, 'content-type': 'application/json' },
      body: JSON.stringify({ client_order_code: plan.externalCode }),
    });
    const body = (await byClientCode.json()) as { code: number; data: { order_code: string }[] };
    expect([body.code, body.data.map((order) => order.order_code)]).toEqual([200, [plan.code]]);
  });

  it("tells a run what GHN's answers do to a lookup: an order with its fees, a settled order, a refused token or shop", async () => {
    const accounts = sandbox.state.carrier('ghn').world.accounts;
    const tokens = new KeyRing(
      [
        ['shop', accounts[0]!.apiKey],
        ['stranger', 'not-a-token'],
        ['wrong-shop', accounts[0]!.apiKey],
      ],
      new Map([
        ['shop', account.shop!],
        ['wrong-shop', '1'],
      ]),
    );
    const tracker = new DefinedCarrierTracker(
      GHN,
      {
        trackingUrl: `${sandbox.url}${GHN_SANDBOX_BASE_PATH}`,
        timeoutMs: 2_000,
        maxAnswerBytes: 1_048_576,
        connections: 1,
      },
      tokens,
    );
    try {
      const now = sandbox.state.clock.now();
      const picked = plans().find((plan) => plan.events.some((e) => e.status === STATUS.PICKED_UP && e.at <= now))!;
      const fresh = plans().find(
        (plan) => plan.createdAt <= now && plan.events.filter((e) => e.at <= now).length === 1,
      );
      const answer = await tracker.lookup('shop', picked.code);
      expect(answer).toMatchObject({ kind: 'snapshot', orderCode: picked.code });
      // The detail and the fee call's answer, each as it came.
      const kept = JSON.parse(answer.body.toString()) as { detail: { data: unknown }; fees: { data: unknown } };
      expect(kept.detail.data).toMatchObject({ order_code: picked.code });
      expect(kept.fees.data).toMatchObject({ order_code: picked.code, detail: { main_service: expect.any(Number) } });
      if (fresh !== undefined) {
        // Not picked up: GHN charges nothing yet, and its fees are not asked.
        const pending = await tracker.lookup('shop', fresh.code);
        expect(JSON.parse(pending.body.toString())).toMatchObject({ fees: null });
      }
      // A number past the account's orders: no such order.
      const unknown = await tracker.lookup('shop', sandbox.state.carrier('ghn').world.orderCode(0, 99_999_998));
      expect(unknown).toMatchObject({ kind: 'carrier_error', errorCode: 'GHN_ORDER_NOT_FOUND', effect: 'final' });
      expect(SETTLING_ERROR_CODES).toContain('GHN_ORDER_NOT_FOUND');
      expect(await tracker.lookup('stranger', picked.code)).toMatchObject({
        kind: 'carrier_error',
        errorCode: 'GHN_TOKEN_REFUSED',
        effect: 'key_refused',
      });
      // The detail needs the token alone; the fee call refuses the shop, and with it the key.
      expect(await tracker.lookup('wrong-shop', picked.code)).toMatchObject({
        kind: 'carrier_error',
        errorCode: 'GHN_SHOP_REFUSED',
        effect: 'key_refused',
      });
    } finally {
      await tracker.close();
    }
  });

  it("injects the sandbox's faults into GHN's calls", async () => {
    const code = plans().find((plan) => plan.createdAt <= sandbox.state.clock.now())!.code;
    sandbox.state.faults.script({ kind: 'rate_limited', operation: 'ghn', times: 1 });
    await expect(client.detail(account, code)).rejects.toBeInstanceOf(RateLimitedFailure);
    sandbox.state.faults.script({ kind: 'server_error', operation: 'ghn', times: 1 });
    await expect(client.detail(account, code)).rejects.toBeInstanceOf(HttpStatusFailure);
    expect((await client.detail(account, code)).kind).toBe('ok');
  });
});
