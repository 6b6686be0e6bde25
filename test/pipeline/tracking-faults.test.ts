import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sumMoney } from '../../src/carriers/247express/contract.js';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../src/carriers/client/answer-size.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { trackingSnapshotAt } from '../../src/sandbox/world/tracking-snapshot.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const ORDERS_PER_ACCOUNT = 200;

describe('tracking with faults on in the sandbox', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let codes: string[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      ordersPerAccount: ORDERS_PER_ACCOUNT,
      faults: {
        exceptionRate: 0.05,
        serverErrorRate: 0.02,
        resetRate: 0.01,
        hangRate: 0.01,
        hangMs: 3_000,
        malformedRate: 0.005,
      },
    });
    workspace = await trackingWorkspace();
    codes = [...sandbox.state.world.orders()].map((plan) => plan.code);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('loads every valid order, with row counts equal to the ground truth', async () => {
    const accountOf = new Map([...sandbox.state.world.orders()].map((p) => [p.code, p.account.alias]));
    const csv = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...codes.map((c) => [c, accountOf.get(c)!]),
    ]);
    const summary = await workspace.track(sandbox, [csv], {
      client: { trackingUrl: sandbox.url, timeoutMs: 400, maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES, connections: 16 },
      retry: { attempts: 10, minDelayMs: 5, maxDelayMs: 40 },
    });

    expect(summary.counters).toMatchObject({ ok: codes.length, transportErrors: 0, deferred: 0, carrierErrors: 0 });
    expect(summary.exitCode).toBe(0);
    // Faults cost attempts, and every attempt was counted.
    expect(summary.lookupsSpent).toBeGreaterThan(codes.length);
    const sandboxDay = Object.values(sandbox.state.quota.usage())[0]!;
    expect(sandboxDay.lookups + sandboxDay.refused).toBeLessThanOrEqual(summary.lookupsSpent);

    const now = sandbox.state.clock.now();
    const truth = codes.map((code) => trackingSnapshotAt(sandbox.state.world.findOrder(code)!, now)!);
    const [counts] = await workspace.query<Record<string, string | number>>(`
      SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM order_statuses) AS statuses,
             (SELECT count(*) FROM order_trackings) AS trackings, (SELECT count(*) FROM order_charges) AS charges,
             (SELECT CAST(sum(total_service_cost) AS VARCHAR) FROM orders) AS billed,
             (SELECT count(*) FROM lookup_results WHERE outcome = 'ok') AS ok_results`);
    expect(Number(counts!.orders)).toBe(codes.length);
    expect(Number(counts!.statuses)).toBe(truth.reduce((n, s) => n + (s.statuses?.length ?? 0), 0));
    expect(Number(counts!.trackings)).toBe(truth.reduce((n, s) => n + (s.trackings?.length ?? 0), 0));
    expect(Number(counts!.charges)).toBe(truth.reduce((n, s) => n + (s.priceInfo?.length ?? 0), 0));
    expect(Number(counts!.billed)).toBe(Number(sumMoney(truth.map((s) => s.totalServiceCost))));
    expect(Number(counts!.ok_results)).toBe(codes.length);

    // Each order's stored status is the carrier's.
    const statuses = await workspace.query<{ order_code: string; status: string }>(
      'SELECT order_code, status FROM orders',
    );
    const truthStatus = new Map(truth.map((s) => [s.orderCode, s.status]));
    for (const row of statuses) expect(row.status).toBe(truthStatus.get(row.order_code));
  });

  it('lists an order that failed for good with its reason, and exits 1', async () => {
    const code = codes[0]!;
    sandbox.state.faults.configure({
      exceptionRate: 0,
      serverErrorRate: 0,
      resetRate: 0,
      hangRate: 0,
      malformedRate: 0,
    });
    sandbox.state.faults.script({ kind: 'server_error', operation: 'tracking', orderCode: code, times: 3 });
    const csv = await workspace.writeCsv('one.csv', [
      ['order_code', 'account'],
      [code, 'hanoi-shop'],
      [codes[1]!, 'hanoi-shop'],
    ]);
    const summary = await workspace.track(sandbox, [csv], { retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 } });

    expect(summary.exitCode).toBe(1);
    expect(summary.counters.ok).toBe(1);
    expect(summary.failedOrders).toEqual([
      expect.objectContaining({ orderCode: code, errorCode: 'LOOKUP_HTTP_STATUS' }),
    ]);
    const rows = await workspace.query<{ outcome: string; error_code: string; attempts: number }>(
      `SELECT outcome, error_code, attempts FROM lookup_results WHERE run_id = '${summary.runId}' AND order_code = '${code}'`,
    );
    expect(rows).toEqual([{ outcome: 'transport_error', error_code: 'LOOKUP_HTTP_STATUS', attempts: 3 }]);
  });
});
