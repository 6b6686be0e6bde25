import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  carrierDayOf,
  checkTrackingResult,
  findOrderStatus,
  instantToEpochMs,
  parseCarrierInstant,
  STATUS,
  type TrackingSnapshot,
} from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { trackingSnapshotAt } from '../../src/sandbox/world/tracking-snapshot.js';
import { getJson, httpGet, postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const NIGHTS = 3;

/** The tracked fields as the change log names them, read from a snapshot; numbers compared as numbers. */
const FIELDS: readonly [string, (s: TrackingSnapshot) => string | number | null][] = [
  ['status', (s) => s.status],
  ['price', (s) => s.price],
  ['price_fr', (s) => s.priceFR],
  ['far_region_fee_amount', (s) => s.farRegionFeeAmount],
  ['fuel_fee_amount', (s) => s.fuelFeeAmount],
  ['vat_amount', (s) => s.vatAmount],
  ['total_service_cost', (s) => s.totalServiceCost],
  ['cod_amount', (s) => s.codAmount],
  ['length', (s) => s.length],
  ['width', (s) => s.width],
  ['height', (s) => s.height],
  ['real_weight', (s) => s.realWeight],
  ['cal_weight', (s) => s.calWeight],
  ['weight', (s) => s.weight],
  ['delay_code', (s) => s.delayCode],
  ['delay_note', (s) => s.delayNote],
];
const TEXT_FIELDS = new Set(['status', 'delay_code', 'delay_note']);

function normalized(field: string, value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return TEXT_FIELDS.has(field) ? String(value) : String(Number(value));
}

function priceLines(s: TrackingSnapshot): Map<string, string> {
  const lines = new Map<string, number>();
  for (const line of s.priceInfo)
    lines.set(line.serviceID ?? '', (lines.get(line.serviceID ?? '') ?? 0) + Number(line.cost));
  return new Map([...lines].map(([id, cost]) => [id, String(cost)]));
}

/** Every change between two snapshots of an order, as `order|field|old|new|night`. */
function changesBetween(before: TrackingSnapshot, after: TrackingSnapshot, night: number): string[] {
  const changes: string[] = [];
  for (const [field, read] of FIELDS) {
    const [old, now] = [normalized(field, read(before)), normalized(field, read(after))];
    if (old !== now) changes.push(`${after.orderCode}|${field}|${old}|${now}|${night}`);
  }
  const [oldLines, newLines] = [priceLines(before), priceLines(after)];
  for (const id of new Set([...oldLines.keys(), ...newLines.keys()])) {
    const [old, now] = [oldLines.get(id) ?? null, newLines.get(id) ?? null];
    if (old !== now) changes.push(`${after.orderCode}|price_info.${id}|${old}|${now}|${night}`);
  }
  return changes;
}

function snapshotOf(sandbox: RunningSandbox, code: string, at: number): TrackingSnapshot | undefined {
  const wire = trackingSnapshotAt(sandbox.state.world.findOrder(code)!, at);
  if (wire === undefined) return undefined;
  const checked = checkTrackingResult(wire);
  if (!checked.ok || checked.value.kind !== 'snapshot')
    throw new Error(`sandbox snapshot of ${code} does not pass the contract`);
  return checked.value.snapshot;
}

async function truthOrders(sandbox: RunningSandbox): Promise<OrderTruth[]> {
  const answer = await httpGet(`${sandbox.url}/_sandbox/truth/orders`);
  return answer.text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as OrderTruth);
}

const isTerminal = (status: string | null | undefined) =>
  status != null && (findOrderStatus(status)?.terminal ?? false);
const epochOf = (text: string) => instantToEpochMs(parseCarrierInstant(text)!);

describe('three nights of tracking with the sandbox clock moving on', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      ordersPerAccount: 60,
      historyDays: 3,
      futureDays: 1,
      lifecycle: { failedAttemptRate: 0.6, anomalyRate: 0.3 },
    });
    workspace = await trackingWorkspace();
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('logs exactly the observable changes and failed attempts, and spends nothing on terminal orders', async () => {
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
    const csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...codes]);

    const nightTimes: number[] = [];
    const truthByNight: Map<string, OrderTruth>[] = [];
    /** Per order, the snapshots the runs saw, with their night. */
    const seen = new Map<string, { night: number; snapshot: TrackingSnapshot }[]>();
    for (let night = 0; night < NIGHTS; night++) {
      if (night > 0) await postControl(sandbox, '/_sandbox/clock', { advanceHours: 24 });
      const at = sandbox.state.clock.now();
      nightTimes.push(at);
      // The orders the warehouse holds as terminal cost nothing tonight.
      const expectedLookups = codes.filter(([code]) => !isTerminal(seen.get(code)?.at(-1)?.snapshot.status)).length;

      const result = await cli(
        [
          'track',
          '--input',
          csv,
          '--db',
          workspace.dbPath,
          '--json',
          '--no-progress',
          '--concurrency',
          '16',
          '--retry-min-ms',
          '5',
        ],
        sandboxEnv(sandbox),
      );
      expect(result.code, result.stderr).toBe(0);

      const usage = await getJson<Record<string, { lookups: number; refused: number }>>(
        `${sandbox.url}/_sandbox/usage`,
      );
      const day = usage[carrierDayOf(at)]!;
      expect(day.lookups + day.refused).toBe(expectedLookups);
      if (night > 0) expect(expectedLookups).toBeLessThan(codes.length);

      for (const [code] of codes) {
        if (isTerminal(seen.get(code)?.at(-1)?.snapshot.status)) continue;
        const snapshot = snapshotOf(sandbox, code, at);
        if (snapshot !== undefined) seen.set(code, [...(seen.get(code) ?? []), { night, snapshot }]);
      }
      truthByNight.push(new Map((await truthOrders(sandbox)).map((order) => [order.orderCode, order])));
    }

    const nightOf = (seenAt: string) => nightTimes.filter((t) => epochOf(seenAt) >= t).length - 1;

    // order_changes: each change between two snapshots the runs saw, on the night of the later one.
    const expectedChanges: string[] = [];
    for (const sightings of seen.values()) {
      for (let i = 1; i < sightings.length; i++)
        expectedChanges.push(
          ...changesBetween(sightings[i - 1]!.snapshot, sightings[i]!.snapshot, sightings[i]!.night),
        );
    }
    const changeRows = await workspace.query<{
      order_code: string;
      field: string;
      old_value: string | null;
      new_value: string | null;
      seen_at: string;
    }>(
      `SELECT order_code, field, old_value, new_value, strftime(seen_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS seen_at FROM order_changes`,
    );
    const stored = changeRows.map(
      (r) =>
        `${r.order_code}|${r.field}|${normalized(r.field, r.old_value)}|${normalized(r.field, r.new_value)}|${nightOf(r.seen_at)}`,
    );
    expect(stored.sort()).toEqual(expectedChanges.sort());
    expect(expectedChanges.some((c) => c.includes('|status|'))).toBe(true);
    expect(expectedChanges.some((c) => c.includes('|delay_code|'))).toBe(true);
    expect(expectedChanges.some((c) => c.includes('|total_service_cost|'))).toBe(true);

    // delivery_failures: each status-16 change of the ground truth that a tracked night showed; its
    // reason when that night's snapshot was about it (it was the latest failure, not yet delivered).
    const expectedFailures = new Map<string, string | null>();
    for (const [code, sightings] of seen) {
      for (const { night } of sightings) {
        const events = truthByNight[night]!.get(code)!.events;
        const delivered = events.some((e) => e.status === STATUS.DELIVERED);
        const failures = events.filter((e) => e.status === STATUS.AWAITING_HANDLING);
        failures.forEach((event, index) => {
          const key = `${code}|${epochOf(event.time)}`;
          const known = index === failures.length - 1 && !delivered ? event.delayCode : null;
          expectedFailures.set(key, expectedFailures.get(key) ?? known);
        });
      }
    }
    const failureRows = await workspace.query<{
      order_code: string;
      attempted_at: string;
      delay_code: string | null;
      source: string;
    }>(
      `SELECT order_code, strftime(attempted_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS attempted_at, delay_code, source FROM delivery_failures`,
    );
    const storedFailures = new Map(
      failureRows.map((r) => [`${r.order_code}|${epochOf(r.attempted_at)}`, r.delay_code]),
    );
    expect(failureRows.every((r) => r.source === 'tracking')).toBe(true);
    expect(storedFailures.size).toBe(failureRows.length);
    expect([...storedFailures].sort()).toEqual([...expectedFailures].sort());
    expect([...expectedFailures.values()].some((c) => c === null)).toBe(true);
    expect([...expectedFailures.values()].some((c) => c !== null)).toBe(true);
  });
});
