/**
 * The sandbox's price calculation: a quote for a clean order's own parcel equals what the order is
 * billed, line by line and in total; bad requests answer IsError with a message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  moneyEquals,
  OPERATION_PATHS,
  PRICE_SERVICE,
  PriceFailureSchema,
  type PriceRequestWire,
  PriceResultSchema,
  STATUS,
  type TrackingSnapshot,
} from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import {
  clientHubs,
  httpPost,
  keysOf,
  mapConcurrent,
  quotePrice,
  quoteRequestFor,
  startTestSandbox,
  trackSnapshot,
  truthOrders,
} from './sandbox-http.js';

/** Orders sampled per (account, far region or not, service type): bounded, and every zone and service covered. */
const PER_GROUP = 3;

let sandbox: RunningSandbox;
let keys: Record<string, string>;
let hubs: Record<string, string>;
let orders: OrderTruth[];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  keys = keysOf(sandbox);
  hubs = await clientHubs(sandbox);
  orders = await truthOrders(sandbox);
});

afterAll(async () => {
  await sandbox.stop();
});

/** Clean orders billed as quoted: no anomaly, not cancelled (bills nothing), never sent back (bills a return charge). */
function quotableSample(): OrderTruth[] {
  const groups = new Map<string, OrderTruth[]>();
  for (const o of orders) {
    const statuses = o.events.map((e) => e.status);
    if (o.anomaly !== null || statuses.includes(STATUS.CANCELLED) || statuses.includes(STATUS.RETURNING)) continue;
    const local =
      o.destination.provinceName === sandbox.state.world.accounts.find((a) => a.alias === o.account)!.hubProvince.name;
    const group = `${o.account}|${o.destination.farRegion ? 'far' : local ? 'local' : 'national'}|${o.serviceTypeID}`;
    const members = groups.get(group) ?? [];
    if (members.length < PER_GROUP) groups.set(group, [...members, o]);
  }
  return [...groups.values()].flat();
}

async function postPrice(body: string, headers: Record<string, string>) {
  return httpPost(`${sandbox.url}${OPERATION_PATHS.price}`, body, headers);
}

/** A failed price answer: IsError true, a message, and Errors naming what was wrong. */
async function expectPriceFailure(request: unknown, headers: Record<string, string>, status = 200): Promise<string> {
  const answer = await postPrice(typeof request === 'string' ? request : JSON.stringify(request), headers);
  expect(answer.status).toBe(status);
  const failure = PriceFailureSchema.parse(JSON.parse(answer.text));
  expect(failure.IsError).toBe(true);
  expect(failure.ErrorMessage).toBeTruthy();
  expect(failure.Errors!.length).toBeGreaterThan(0);
  return failure.ErrorMessage!;
}

describe('price calculation of clean orders', () => {
  it("equals each order's billed lines, weights and total to the unit", async () => {
    const sample = quotableSample();
    const zones = new Set(sample.map((o) => o.destination.farRegion));
    expect(zones.size).toBe(2);
    expect(new Set(sample.map((o) => o.serviceTypeID)).size).toBe(2);
    expect(sample.length).toBeGreaterThanOrEqual(20);

    const pairs = await mapConcurrent(sample, 8, async (order) => {
      const snapshot: TrackingSnapshot = await trackSnapshot(sandbox, keys[order.account]!, order.orderCode);
      const quote = await quotePrice(
        sandbox,
        keys[order.account]!,
        quoteRequestFor(order, snapshot, hubs[order.account]!),
      );
      return { order, snapshot, quote };
    });
    for (const { order, snapshot, quote } of pairs) {
      const label = order.orderCode;
      expect(quote.IsError, label).toBe(false);
      expect(quote.Errors).toEqual([]);
      expect(quote.ErrorMessage).toBe('');
      const quoted = quote.ExtraServices.map((l) => `${l.ServiceID}=${l.Cost}`).sort();
      const billed = snapshot.priceInfo.map((l) => `${l.serviceID}=${l.cost}`).sort();
      expect(quoted, label).toEqual(billed);
      expect(moneyEquals(quote.TotalServiceCost, snapshot.totalServiceCost), label).toBe(true);
      expect(quote.CalWeight, label).toBe(snapshot.calWeight);
      expect(quote.Weight, label).toBe(snapshot.weight);
      // Type 1 is the main service, 3 fuel and VAT (docs/carriers/247express.md).
      for (const line of quote.ExtraServices) {
        expect(line.Type, `${label} ${line.ServiceID}`).toBe(line.ServiceID === snapshot.serviceTypeID ? 1 : 3);
        if (line.Type === 1) expect(moneyEquals(line.Cost, snapshot.price), label).toBe(true);
      }
    }
  });

  it('matches the province name whatever its case, surrounding blanks or Unicode composition', async () => {
    const order = quotableSample().find(
      (o) => o.destination.provinceName.normalize('NFD') !== o.destination.provinceName,
    )!;
    const snapshot = await trackSnapshot(sandbox, keys[order.account]!, order.orderCode);
    const request = quoteRequestFor(order, snapshot, hubs[order.account]!);
    const exact = await quotePrice(sandbox, keys[order.account]!, request);
    const loose = await quotePrice(sandbox, keys[order.account]!, {
      ...request,
      ToProvinceName: `  ${order.destination.provinceName.toUpperCase().normalize('NFD')} `,
    });
    expect(loose.IsError).toBe(false);
    expect(loose.TotalServiceCost).toBe(exact.TotalServiceCost);
    expect(loose.ExtraServices).toEqual(exact.ExtraServices);
  });

  it('charges more for a heavier parcel and adds the far-region line for a far region only', async () => {
    const [account] = sandbox.state.world.accounts;
    const key = account!.apiKey;
    const base: PriceRequestWire = {
      ToProvinceName: 'Hà Nội',
      ToDistrictName: 'Quận Cầu Giấy',
      ToWardName: 'Phường Dịch Vọng',
      Length: 10,
      Width: 10,
      Height: 10,
      RealWeight: 1,
      ClientHubID: account!.clientHubID,
      ServiceTypeID: 'DE',
    };
    const light = await quotePrice(sandbox, key, base);
    const heavy = await quotePrice(sandbox, key, { ...base, RealWeight: 5 });
    const far = await quotePrice(sandbox, key, {
      ...base,
      ToProvinceName: 'Hà Giang',
      ToDistrictName: 'Huyện Đồng Văn',
      ToWardName: 'Xã Lũng Cú',
    });
    expect(Number(heavy.TotalServiceCost)).toBeGreaterThan(Number(light.TotalServiceCost));
    expect(light.ExtraServices.some((l) => l.ServiceID === PRICE_SERVICE.FAR_REGION)).toBe(false);
    expect(far.ExtraServices.some((l) => l.ServiceID === PRICE_SERVICE.FAR_REGION)).toBe(true);
    // CalWeight 36 = 60 x 60 x 60 / 6000 and Weight = max(RealWeight, CalWeight), as in the published example.
    const bulky = await quotePrice(sandbox, key, { ...base, Length: 60, Width: 60, Height: 60, RealWeight: 60 });
    expect([bulky.CalWeight, bulky.Weight]).toEqual([36, 60]);
  });
});

describe('price calculation errors', () => {
  let valid: PriceRequestWire;
  let key: string;

  beforeAll(() => {
    const [account] = sandbox.state.world.accounts;
    key = account!.apiKey;
    valid = {
      ToProvinceName: 'Đà Nẵng',
      ToDistrictName: 'Quận Hải Châu',
      ToWardName: 'Phường Thạch Thang',
      Length: 20,
      Width: 15,
      Height: 10,
      RealWeight: 1.5,
      ClientHubID: account!.clientHubID,
      ServiceTypeID: 'DE',
    };
  });

  it('quotes the valid request the others are derived from', async () => {
    const answer = await postPrice(JSON.stringify(valid), { ApiKey: key });
    expect(answer.status).toBe(200);
    expect(PriceResultSchema.parse(JSON.parse(answer.text)).IsError).toBe(false);
  });

  it('refuses an unknown province, naming it', async () => {
    expect(await expectPriceFailure({ ...valid, ToProvinceName: 'Atlantis' }, { ApiKey: key })).toContain('Atlantis');
  });

  it('refuses RealWeight 0 and a negative dimension', async () => {
    expect(await expectPriceFailure({ ...valid, RealWeight: 0 }, { ApiKey: key })).toContain('RealWeight');
    expect(await expectPriceFailure({ ...valid, Height: -1 }, { ApiKey: key })).toContain('Height');
  });

  it("refuses another account's hub and an unknown one", async () => {
    const other = sandbox.state.world.accounts[1]!;
    expect(await expectPriceFailure({ ...valid, ClientHubID: other.clientHubID }, { ApiKey: key })).toContain(
      other.clientHubID,
    );
    expect(await expectPriceFailure({ ...valid, ClientHubID: 'NOWHERE-HUB' }, { ApiKey: key })).toContain(
      'NOWHERE-HUB',
    );
    // The same hub is fine with its own account's key.
    expect((await quotePrice(sandbox, other.apiKey, { ...valid, ClientHubID: other.clientHubID })).IsError).toBe(false);
  });

  it('refuses an unknown service type and a missing field', async () => {
    expect(await expectPriceFailure({ ...valid, ServiceTypeID: 'XX' }, { ApiKey: key })).toContain('XX');
    const { RealWeight: _, ...withoutWeight } = valid;
    expect(await expectPriceFailure(withoutWeight, { ApiKey: key })).toContain('RealWeight');
  });

  it('answers 400 to a body that is not JSON', async () => {
    await expectPriceFailure('{"ToProvinceName": "Hà Nội",', { ApiKey: key }, 400);
  });

  it('answers 401 without the ApiKey header or with an unknown key', async () => {
    expect(await expectPriceFailure(valid, {}, 401)).toContain('ApiKey');
    await expectPriceFailure(valid, { ApiKey: 'not-a-key' }, 401);
  });
});
