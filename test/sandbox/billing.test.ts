/**
 * The charges on the sandbox's tracking results: every order without a billing anomaly keeps the
 * carrier's pricing relations to the unit, and every order with one breaks the relation its kind
 * names, or differs from the price quote, or changes its total after delivery, as the truth says.
 */
import { Big } from 'big.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  moneyEquals,
  PRICE_SERVICE,
  PUBLISHED_PRICING,
  STATUS,
  shareOfMoney,
  sumMoney,
  type TrackingSnapshot,
} from '../../src/carriers/247express/contract.js';
import type { AnomalyTruth, OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import type { SandboxOptionsInput } from '../../src/sandbox/sandbox-options.js';
import { ANOMALY_KINDS, type AnomalyKind } from '../../src/sandbox/world/order-plan.js';
import { volumetricWeight } from '../../src/sandbox/world/tariff.js';
import {
  clientHubs,
  epochOf,
  keysOf,
  mapConcurrent,
  postControl,
  quotePrice,
  quoteRequestFor,
  startTestSandbox,
  trackSnapshot,
  truthAnomalies,
  truthOrders,
} from './sandbox-http.js';

const RELATION = {
  LINES_SUM: 'priceInfo sums to totalServiceCost',
  CHARGES_SUM: 'price + priceFR + farRegionFeeAmount + fuelFeeAmount + vatAmount = totalServiceCost',
  CAL_WEIGHT: 'calWeight = L x W x H / 6000, to two decimals',
  WEIGHT: 'weight = max(realWeight, calWeight)',
  FUEL: 'fuelFeeAmount = 20% of price',
  VAT: 'vatAmount = 10% of price + farRegionFeeAmount + fuelFeeAmount + priceFR',
  LINES_CARRY_AMOUNTS: 'the main, Fuel and VAT lines carry price, fuelFeeAmount and vatAmount',
  FAR_REGION_LINE: 'a far-region (VSVX) line is there exactly when the far-region fee is not zero, with that fee',
  FAR_REGION_FEE: 'a far-region fee exactly when the destination is a far region (unless cancelled)',
  CANCELLED_ZERO: 'a cancelled order bills nothing',
  RETURN_CHARGE: 'a return charge (priceFR) exactly when the order is being returned',
} as const;

/** The relation each anomaly kind breaks (the two others show against the quote or over time). */
const BROKEN_BY: Partial<Record<AnomalyKind, string>> = {
  total_mismatch: RELATION.CHARGES_SUM,
  wrong_cal_weight: RELATION.CAL_WEIGHT,
  wrong_chargeable_weight: RELATION.WEIGHT,
  wrong_fuel: RELATION.FUEL,
  wrong_vat: RELATION.VAT,
  far_region_fee_without_line: RELATION.FAR_REGION_LINE,
  return_charge_not_returned: RELATION.RETURN_CHARGE,
  charge_on_cancelled: RELATION.CANCELLED_ZERO,
};

/** The pricing relations a snapshot breaks, by name; none for a clean bill. */
function brokenRelations(s: TrackingSnapshot, truth: OrderTruth): string[] {
  const broken: string[] = [];
  const check = (relation: string, holds: boolean) => {
    if (!holds) broken.push(relation);
  };
  const isZero = (amount: string) => moneyEquals(amount, 0);
  const linesOf = (serviceID: string) => s.priceInfo.filter((l) => l.serviceID === serviceID);
  const has = (status: string) => s.statuses.some((x) => x.status === status);
  const volume = new Big(s.length).times(s.width).times(s.height);

  check(RELATION.LINES_SUM, moneyEquals(sumMoney(s.priceInfo.map((l) => l.cost)), s.totalServiceCost));
  check(
    RELATION.CHARGES_SUM,
    moneyEquals(sumMoney([s.price, s.priceFR, s.farRegionFeeAmount, s.fuelFeeAmount, s.vatAmount]), s.totalServiceCost),
  );
  check(RELATION.CAL_WEIGHT, volume.div(PUBLISHED_PRICING.volumetricDivisor).round(2, Big.roundHalfUp).eq(s.calWeight));
  check(RELATION.WEIGHT, s.weight === Math.max(s.realWeight, s.calWeight));
  check(RELATION.FUEL, moneyEquals(s.fuelFeeAmount, shareOfMoney(s.price, PUBLISHED_PRICING.fuelShare)));
  check(
    RELATION.VAT,
    moneyEquals(
      s.vatAmount,
      shareOfMoney(sumMoney([s.price, s.farRegionFeeAmount, s.fuelFeeAmount, s.priceFR]), PUBLISHED_PRICING.vatShare),
    ),
  );
  const farLines = linesOf(PRICE_SERVICE.FAR_REGION);
  check(
    RELATION.FAR_REGION_LINE,
    farLines.length === (isZero(s.farRegionFeeAmount) ? 0 : 1) &&
      farLines.every((l) => moneyEquals(l.cost, s.farRegionFeeAmount)),
  );
  check(RELATION.RETURN_CHARGE, !isZero(s.priceFR) === has(STATUS.RETURNING));
  if (has(STATUS.CANCELLED)) {
    const amounts = [s.price, s.priceFR, s.farRegionFeeAmount, s.fuelFeeAmount, s.vatAmount, s.totalServiceCost];
    check(RELATION.CANCELLED_ZERO, amounts.every(isZero) && s.priceInfo.length === 0);
  } else {
    // The main line's serviceID is the order's service type (DE is the documented main express service).
    const carries = (serviceID: string, amount: string) =>
      linesOf(serviceID).length === 1 && moneyEquals(linesOf(serviceID)[0]!.cost, amount);
    check(
      RELATION.LINES_CARRY_AMOUNTS,
      carries(s.serviceTypeID, s.price) &&
        carries(PRICE_SERVICE.FUEL, s.fuelFeeAmount) &&
        carries(PRICE_SERVICE.VAT, s.vatAmount),
    );
    check(RELATION.FAR_REGION_FEE, isZero(s.farRegionFeeAmount) !== truth.destination.farRegion);
  }
  return broken;
}

interface World {
  sandbox: RunningSandbox;
  keys: Record<string, string>;
  hubs: Record<string, string>;
  truths: Map<string, OrderTruth>;
  anomalies: AnomalyTruth[];
  snapshots: Map<string, TrackingSnapshot>;
}

async function openWorld(options: SandboxOptionsInput): Promise<World> {
  const sandbox = await startTestSandbox(options);
  const keys = keysOf(sandbox);
  const existing = (await truthOrders(sandbox)).filter((o) => o.status !== null);
  const snapshots = await mapConcurrent(existing, 16, (o) => trackSnapshot(sandbox, keys[o.account]!, o.orderCode));
  return {
    sandbox,
    keys,
    hubs: await clientHubs(sandbox),
    truths: new Map(existing.map((o) => [o.orderCode, o])),
    anomalies: await truthAnomalies(sandbox),
    snapshots: new Map(snapshots.map((s) => [s.orderCode, s])),
  };
}

async function quoteFor(world: World, s: TrackingSnapshot) {
  const truth = world.truths.get(s.orderCode)!;
  return quotePrice(world.sandbox, world.keys[truth.account]!, quoteRequestFor(truth, s, world.hubs[truth.account]!));
}

/** A world with many anomalies of every kind, and orders still to come so some are not yet visible. */
const ANOMALOUS_WORLD: SandboxOptionsInput = {
  seed: 5,
  ordersPerAccount: 400,
  futureDays: 2,
  lifecycle: { anomalyRate: 0.3 },
};

/** The pricing relations hold on every order without an anomaly, and on those whose anomaly has not shown yet. */
function expectCleanBills(world: World): void {
  const clean = [...world.snapshots.values()].filter((s) => world.truths.get(s.orderCode)!.anomaly === null);
  expect(clean.length).toBeGreaterThan(0.6 * world.snapshots.size);
  for (const s of clean) expect(brokenRelations(s, world.truths.get(s.orderCode)!), s.orderCode).toEqual([]);
  for (const a of world.anomalies.filter((x) => !x.observableNow && world.snapshots.has(x.orderCode))) {
    expect(
      brokenRelations(world.snapshots.get(a.orderCode)!, world.truths.get(a.orderCode)!),
      `${a.orderCode} ${a.kind}`,
    ).toEqual([]);
  }
  // Each conditional relation is exercised on both of its sides.
  const statusesOf = (s: TrackingSnapshot) => s.statuses.map((x) => x.status);
  expect(clean.filter((s) => !moneyEquals(s.farRegionFeeAmount, 0)).length).toBeGreaterThan(0);
  expect(clean.filter((s) => statusesOf(s).includes(STATUS.CANCELLED)).length).toBeGreaterThan(0);
  expect(clean.filter((s) => statusesOf(s).includes(STATUS.RETURNING)).length).toBeGreaterThan(0);
  expect(clean.filter((s) => s.calWeight > s.realWeight).length).toBeGreaterThan(0);
  expect(new Set(clean.map((s) => s.serviceTypeID)).size).toBeGreaterThan(1);
}

describe('volumetric weight', () => {
  const decimal = (l: number, w: number, h: number) =>
    Number(new Big(l).times(w).times(h).div(PUBLISHED_PRICING.volumetricDivisor).round(2, Big.roundHalfUp));

  it('rounds exact halves up, in whole centimetres and in fractions, as decimal arithmetic does', () => {
    // 870 / 6000 = 0.145 exactly, which binary floating point rounds down.
    expect(volumetricWeight({ length: 30, width: 29, height: 1, realWeight: 0 })).toBe(0.15);
    expect(volumetricWeight({ length: 29, width: 1.5, height: 20, realWeight: 0 })).toBe(0.15);
    for (let l = 1; l <= 61; l += 3) {
      for (let w = 1; w <= 51; w += 2) {
        for (let h = 1; h <= 41; h++) {
          expect(volumetricWeight({ length: l, width: w, height: h, realWeight: 0 })).toBe(decimal(l, w, h));
          expect(volumetricWeight({ length: l, width: w, height: h + 0.5, realWeight: 0 })).toBe(
            decimal(l, w, h + 0.5),
          );
        }
      }
    }
  });
});

describe('pricing relations in the default world', () => {
  let world: World;

  beforeAll(async () => {
    world = await openWorld({});
  });

  afterAll(async () => {
    await world.sandbox.stop();
  });

  it('hold to the unit on every order without an anomaly, and on those whose anomaly has not shown yet', () => {
    expectCleanBills(world);
  });
});

describe('billing in a world with many anomalies', () => {
  let world: World;

  beforeAll(async () => {
    world = await openWorld(ANOMALOUS_WORLD);
  });

  afterAll(async () => {
    await world.sandbox.stop();
  });

  it('keeps the pricing relations on the orders without an anomaly, and on those whose anomaly has not shown yet', () => {
    expectCleanBills(world);
  });

  it('lists in truth/anomalies exactly the orders truth/orders marks, with every kind present', () => {
    const marked = [...world.truths.values()].filter((o) => o.anomaly !== null);
    const listed = new Map(world.anomalies.map((a) => [a.orderCode, a.kind]));
    for (const o of marked) expect(listed.get(o.orderCode)).toBe(o.anomaly);
    expect(new Set(world.anomalies.map((a) => a.kind))).toEqual(new Set(ANOMALY_KINDS));
  });

  it('shows each visible anomaly: the relation its kind breaks, or a bill above the quote', async () => {
    const visible = world.anomalies.filter((a) => a.observableNow && world.snapshots.has(a.orderCode));
    const seen = new Set<AnomalyKind>();
    for (const a of visible) {
      const s = world.snapshots.get(a.orderCode)!;
      const broken = brokenRelations(s, world.truths.get(a.orderCode)!);
      const expected = BROKEN_BY[a.kind];
      if (expected !== undefined) {
        expect(broken, `${a.orderCode} ${a.kind}`).toContain(expected);
      } else {
        // overbilled_vs_quote and a delivered order re-billed later: the clean quote for the same parcel is lower.
        const quote = await quoteFor(world, s);
        expect(quote.IsError).toBe(false);
        expect(new Big(s.totalServiceCost).gt(quote.TotalServiceCost), `${a.orderCode} ${a.kind}`).toBe(true);
        const main = quote.ExtraServices.find((l) => l.Type === 1)!;
        expect(new Big(s.price).gt(main.Cost), `${a.orderCode} ${a.kind} main charge`).toBe(true);
      }
      seen.add(a.kind);
    }
    expect(seen).toEqual(new Set(ANOMALY_KINDS));
  });

  it('changes the total of a delivered order once the clock passes observableFrom', async () => {
    // A sandbox of its own: this moves the clock.
    const later = await startTestSandbox(ANOMALOUS_WORLD);
    try {
      const keys = keysOf(later);
      const pending = (await truthAnomalies(later))
        .filter((a) => a.kind === 'total_changed_after_delivery' && !a.observableNow)
        .sort((a, b) => epochOf(a.observableFrom) - epochOf(b.observableFrom))
        .slice(0, 5);
      expect(pending.length).toBeGreaterThan(0);
      for (const a of pending) {
        const from = epochOf(a.observableFrom);
        await postControl(later, '/_sandbox/clock', { advanceMs: Math.max(0, from - 1_000 - later.state.clock.now()) });
        const before = await trackSnapshot(later, keys[a.account]!, a.orderCode);
        expect(before.status).toBe(STATUS.DELIVERED);
        await postControl(later, '/_sandbox/clock', { advanceMs: 1_000 });
        const after = await trackSnapshot(later, keys[a.account]!, a.orderCode);
        expect(new Big(after.totalServiceCost).gt(before.totalServiceCost), a.orderCode).toBe(true);
        expect(new Big(after.price).gt(before.price), a.orderCode).toBe(true);
        expect(after.statuses).toEqual(before.statuses);
      }
    } finally {
      await later.stop();
    }
  });
});
