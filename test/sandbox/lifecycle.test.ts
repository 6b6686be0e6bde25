/**
 * Orders' lives as the tracking lookup shows them, over every order of a default world: histories in
 * time order, only documented codes, every status present, failed attempts with delay codes, places in
 * Vietnam; moving the clock advances orders and never takes history away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DELAY_REASONS,
  findOrderStatus,
  findTrackingStep,
  ORDER_STATUSES,
  STATUS,
  TERMINAL_STATUS_CODES,
  TRACKING_STEPS,
  type TrackingSnapshot,
} from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import {
  epochOf,
  keysOf,
  mapConcurrent,
  postControl,
  startTestSandbox,
  trackSnapshot,
  truthOrders,
} from './sandbox-http.js';

/** Letters only Vietnamese writes among the Latin scripts (tone marks and đ, ơ, ư, ă). */
const VIETNAMESE_LETTER = /[ăâđêôơưàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợùúủũụừứửữựỳýỷỹỵ]/i;

const DELAY_CODES = new Set(DELAY_REASONS.map((r) => r.code));
const STEP_CODES = new Set(TRACKING_STEPS.map((s) => s.code));

let sandbox: RunningSandbox;
let keys: Record<string, string>;
let truths: OrderTruth[];
let snapshots: TrackingSnapshot[];

function isSorted(times: readonly string[]): boolean {
  return times.every((t, i) => i === 0 || epochOf(times[i - 1]!) <= epochOf(t));
}

async function snapshotsOf(orders: readonly OrderTruth[]): Promise<TrackingSnapshot[]> {
  return mapConcurrent(orders, 16, (o) => trackSnapshot(sandbox, keys[o.account]!, o.orderCode));
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  keys = keysOf(sandbox);
  truths = await truthOrders(sandbox);
  snapshots = await snapshotsOf(truths);
});

afterAll(async () => {
  await sandbox.stop();
});

describe('order lifecycle at the default start', () => {
  it('covers a world of 3 accounts x 500 orders, all created by the start', () => {
    expect(truths.length).toBe(1500);
    expect(truths.every((o) => o.status !== null && epochOf(o.createdAt) <= sandbox.state.clock.now())).toBe(true);
  });

  it('lists statuses and trackings oldest to newest, starting from DATIEPNHAN and entry into the system', () => {
    for (const s of snapshots) {
      expect(isSorted(s.statuses.map((x) => x.time)), `${s.orderCode} statuses`).toBe(true);
      expect(isSorted(s.trackings.map((x) => x.dateChange)), `${s.orderCode} trackings`).toBe(true);
      expect(s.statuses[0]!.status).toBe(STATUS.RECEIVED);
      expect(s.trackings[0]!.statusID).toBe('0');
      expect(s.status).toBe(s.statuses[s.statuses.length - 1]!.status);
    }
  });

  it('uses only documented status codes with their names, and step codes from TRACKING_STEPS', () => {
    for (const s of snapshots) {
      for (const item of [s, ...s.statuses]) {
        const known = findOrderStatus(item.status);
        expect(known, `${s.orderCode} status ${item.status}`).toBeDefined();
        expect(item.statusName).toBe(known!.name);
        expect(item.trackingName).toBe(known!.displayName);
      }
      for (const step of s.trackings) {
        expect(STEP_CODES.has(step.statusID), `${s.orderCode} step ${step.statusID}`).toBe(true);
        expect(step.statusName).toBe(findTrackingStep(step.statusID)!.displayName);
      }
    }
  });

  it('shows all 11 statuses among the current ones', () => {
    const current = new Set(snapshots.map((s) => s.status));
    expect([...current].sort()).toEqual(ORDER_STATUSES.map((s) => s.code).sort());
  });

  it('ends an order at a terminal status: nothing follows delivery, return, loss, cancellation or confiscation', () => {
    for (const s of snapshots) {
      const codes = s.statuses.map((x) => x.status);
      for (const code of codes.slice(0, -1))
        expect(TERMINAL_STATUS_CODES, `${s.orderCode}: ${codes.join(' ')}`).not.toContain(code);
      if (codes.includes(STATUS.RETURNED)) expect(codes[codes.length - 2]).toBe(STATUS.RETURNING);
    }
  });

  it('gives every failed attempt (16) a documented delay code, and no other status one', () => {
    let failed = 0;
    for (const o of truths) {
      for (const e of o.events) {
        if (e.status === STATUS.AWAITING_HANDLING) {
          failed++;
          expect(DELAY_CODES.has(e.delayCode ?? ''), `${o.orderCode} delay ${e.delayCode}`).toBe(true);
        } else {
          expect(e.delayCode).toBeNull();
        }
      }
    }
    expect(failed).toBeGreaterThan(0);
  });

  it("carries the last failed attempt's delay code and note in the snapshot until delivery", () => {
    snapshots.forEach((s, i) => {
      const events = truths[i]!.events;
      const lastFailure = [...events].reverse().find((e) => e.delayCode !== null);
      const delivered = events.some((e) => e.status === STATUS.DELIVERED);
      if (s.status === STATUS.AWAITING_HANDLING) expect(lastFailure).toBe(events[events.length - 1]);
      if (lastFailure && !delivered) {
        expect(s.delayCode).toBe(lastFailure.delayCode);
        expect(s.delayNote).toBeTruthy();
      } else {
        expect(s.delayCode).toBeNull();
        expect(s.delayNote).toBeNull();
      }
    });
  });

  it('dates pickup and delivery by their status changes', () => {
    for (const s of snapshots) {
      const at = (code: string) => s.statuses.find((x) => x.status === code)?.time ?? null;
      expect(s.acceptDate).toBe(at(STATUS.PICKED_UP));
      expect(s.deliveryDate).toBe(at(STATUS.DELIVERED));
      expect(s.receiverName !== null).toBe(s.status === STATUS.DELIVERED);
    }
  });

  it('names Vietnamese provinces and post offices, and delivers in the destination province', () => {
    const provinces = new Set<string>();
    snapshots.forEach((s, i) => {
      for (const x of s.statuses) {
        expect(x.provinceName).toBeTruthy();
        expect(x.postOfficeName).toBeTruthy();
        provinces.add(x.provinceName!);
      }
      for (const x of s.trackings) provinces.add(x.provinceName!);
      const delivered = s.statuses.find((x) => x.status === STATUS.DELIVERED);
      if (delivered) expect(delivered.provinceName).toBe(truths[i]!.destination.provinceName);
    });
    expect(provinces).toContain('Hà Nội');
    expect(provinces).toContain('TP. Hồ Chí Minh');
    const vietnamese = [...provinces].filter((p) => VIETNAMESE_LETTER.test(p));
    expect(vietnamese.length).toBeGreaterThanOrEqual(0.75 * provinces.size);
    // A province code always goes with the same province name.
    const byId = new Map<string, Set<string>>();
    for (const s of snapshots)
      for (const x of s.trackings) byId.set(x.provinceID!, (byId.get(x.provinceID!) ?? new Set()).add(x.provinceName!));
    for (const [id, names] of byId) expect(names.size, id).toBe(1);
  });
});

describe('order lifecycle as the clock moves', () => {
  it('advances some orders, never the finished ones, and never shortens a history', async () => {
    const moved = await postControl<{ now: string }>(sandbox, '/_sandbox/clock', { advanceDays: 1 });
    expect(epochOf(moved.now)).toBe(epochOf('2026-11-21T22:00:00+07:00'));
    const later = await snapshotsOf(truths);
    let changed = 0;
    later.forEach((after, i) => {
      const before = snapshots[i]!;
      expect(after.statuses.slice(0, before.statuses.length)).toEqual(before.statuses);
      expect(after.trackings.slice(0, before.trackings.length)).toEqual(before.trackings);
      if (TERMINAL_STATUS_CODES.includes(before.status)) expect(after.statuses).toEqual(before.statuses);
      if (after.status !== before.status) changed++;
      // What was added happened in the day the clock moved through.
      for (const x of after.statuses.slice(before.statuses.length)) {
        expect(epochOf(x.time)).toBeGreaterThan(epochOf('2026-11-20T22:00:00+07:00'));
        expect(epochOf(x.time)).toBeLessThanOrEqual(epochOf(moved.now));
      }
    });
    expect(changed).toBeGreaterThan(0);
    expect(changed).toBeLessThan(later.length);
  });

  it('refuses to move the clock backwards', async () => {
    const now = sandbox.state.clock.now();
    const answer = await fetch(`${sandbox.url}/_sandbox/clock`, {
      method: 'POST',
      body: JSON.stringify({ to: '2026-11-01T00:00:00+07:00' }),
    });
    expect(answer.status).toBe(400);
    expect(sandbox.state.clock.now()).toBe(now);
  });
});
