import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS } from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { epochOf, postControl, startTestSandbox, truthOrders } from '../sandbox/sandbox-http.js';
import { cli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { allOrdersCsv, readJsonRows, sandboxNow } from './report-fixtures.js';

const HOUR = 3_600_000;

interface Attempt {
  readonly orderCode: string;
  readonly province: string;
  readonly delayCode: string | null;
  readonly at: number;
  /** Carrier-local day, YYYY-MM-DD. */
  readonly day: string;
  readonly isoWeek: string;
}

function isoWeekOf(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  const weekday = (date.getUTCDay() + 6) % 7;
  const thursday = new Date(date.getTime() + (3 - weekday) * 86_400_000);
  const yearStart = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = Math.floor((thursday.getTime() - yearStart) / 86_400_000 / 7) + 1;
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

/** Every failed attempt (status 16) the sandbox's orders have had, from its ground truth. */
function attemptsOf(orders: readonly OrderTruth[]): Attempt[] {
  return orders.flatMap((order) =>
    order.events
      .filter((e) => e.status === STATUS.AWAITING_HANDLING)
      .map((e) => {
        const day = e.time.slice(0, 10);
        return {
          orderCode: order.orderCode,
          province: order.destination.provinceName,
          delayCode: e.delayCode,
          at: epochOf(e.time),
          day,
          isoWeek: isoWeekOf(day),
        };
      }),
  );
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

type Files = { table: string; path: string }[];

async function failuresReport(
  sandbox: RunningSandbox,
  workspace: TrackingWorkspace,
  extra: string[] = [],
): Promise<(table: string) => Promise<Record<string, unknown>[]>> {
  const out = join(workspace.dir, `reports-${extra.join('-') || 'all'}`);
  const result = await cli(
    ['report', 'failures', '--db', workspace.dbPath, '--format', 'json', '--out', out, '--json', ...extra],
    sandboxNow(sandbox),
  );
  expect(result.code, result.stderr).toBe(0);
  const files = (JSON.parse(result.stdout) as { files: Files }).files;
  return (table) => readJsonRows(files.find((f) => f.table === table)!.path);
}

describe('report failures', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let attempts: Attempt[];
  let truth: OrderTruth[];

  beforeAll(async () => {
    // Orders created from now on, so every failed attempt happens while the nightly runs watch.
    sandbox = await startTestSandbox({
      ordersPerAccount: 60,
      historyDays: 0,
      futureDays: 2,
      lifecycle: { failedAttemptRate: 0.5 },
    });
    workspace = await trackingWorkspace();
    const csv = await allOrdersCsv(sandbox, workspace);
    // Twice a night for five days: a failed attempt stays the latest one at least 13 hours, so every reason is seen.
    for (let run = 0; run < 10; run++) {
      if (run > 0) await postControl(sandbox, '/_sandbox/clock', { advanceHours: 12 });
      await workspace.track(sandbox, [csv]);
    }
    truth = await truthOrders(sandbox);
    attempts = attemptsOf(truth);
  });

  afterAll(async () => {
    await sandbox?.stop();
    await workspace?.dispose();
  });

  it('counts per reason, province, week, repeated orders and orders awaiting handling equal the ground truth', async () => {
    expect(attempts.length).toBeGreaterThan(30);
    const table = await failuresReport(sandbox, workspace);

    const byReason = await table('failures-by-reason');
    expect(Object.fromEntries(byReason.map((r) => [String(r.delay_code), Number(r.failures)]))).toEqual(
      countBy(attempts, (a) => String(a.delayCode)),
    );
    expect(byReason.every((r) => typeof r.delay_meaning === 'string' && r.delay_meaning !== '')).toBe(true);
    expect(byReason.reduce((sum, r) => sum + Number(r.share), 0)).toBeCloseTo(1, 3);

    const byProvince = await table('failures-by-province');
    expect(Object.fromEntries(byProvince.map((r) => [String(r.province_name), Number(r.failures)]))).toEqual(
      countBy(attempts, (a) => a.province),
    );

    const byWeek = await table('failures-by-week');
    expect(Object.fromEntries(byWeek.map((r) => [String(r.iso_week), Number(r.failures)]))).toEqual(
      countBy(attempts, (a) => a.isoWeek),
    );

    const perOrder = countBy(attempts, (a) => a.orderCode);
    const repeated = await table('failures-repeated');
    expect(Object.fromEntries(repeated.map((r) => [String(r.order_code), Number(r.attempts)]))).toEqual(
      Object.fromEntries(Object.entries(perOrder).filter(([, n]) => n >= 2)),
    );

    const now = sandbox.state.clock.now();
    const awaitingTruth = truth.filter((o) => o.status === STATUS.AWAITING_HANDLING);
    const awaiting = await table('failures-awaiting');
    expect(awaiting.map((r) => r.order_code).sort()).toEqual(awaitingTruth.map((o) => o.orderCode).sort());
    for (const order of awaitingTruth) {
      const last = order.events[order.events.length - 1]!;
      const row = awaiting.find((r) => r.order_code === order.orderCode)!;
      expect(row.delay_code).toBe(last.delayCode);
      expect(Number(row.waited_hours)).toBeCloseTo((now - epochOf(last.time)) / HOUR, 1);
    }
  });

  it('a range of days counts the attempts of those days only', async () => {
    const days = [...new Set(attempts.map((a) => a.day))].sort();
    const day = days[Math.floor(days.length / 2)]!;
    const table = await failuresReport(sandbox, workspace, ['--from', day, '--to', day]);
    const ofDay = attempts.filter((a) => a.day === day);
    expect(ofDay.length).toBeGreaterThan(0);
    const byReason = await table('failures-by-reason');
    expect(Object.fromEntries(byReason.map((r) => [String(r.delay_code), Number(r.failures)]))).toEqual(
      countBy(ofDay, (a) => String(a.delayCode)),
    );
    expect((await table('failures')).length).toBe(ofDay.length);
  });
});
