/**
 * The per-order audit rows kept by their writers (tracking loads, price quotes, merges) are those
 * computed from scratch, and so is the charges report that reads them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayRuns } from '../../src/pipeline/tracking/replay-runs.js';
import { chargesQuery, DEFAULT_CHARGE_RULES } from '../../src/reports/charges-report.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { CHARGE_AUDIT_TABLE, chargeAuditQuery } from '../../src/warehouse/charge-audit-rows.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { sandboxNow } from '../reports/report-fixtures.js';
import { postControl, startTestSandbox, truthOrders } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

describe('order_charge_audit', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let worker: TrackingWorkspace;
  let truth: OrderTruth[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 60, seed: 11, lifecycle: { anomalyRate: 0.3 } });
    workspace = await trackingWorkspace();
    worker = await trackingWorkspace();
    truth = await truthOrders(sandbox);
  });

  afterAll(async () => {
    await sandbox?.stop();
    await workspace?.dispose();
    await worker?.dispose();
  });

  function ordersCsv(target: TrackingWorkspace, name: string, orders: readonly OrderTruth[]): Promise<string> {
    return target.writeCsv(name, [['order_code', 'account'], ...orders.map((o) => [o.orderCode, o.account])]);
  }

  /** `price --for-orders` for these orders into the workspace's warehouse. */
  async function price(orders: readonly OrderTruth[], name: string): Promise<void> {
    const path = join(workspace.dir, name);
    const lines = orders.map((o) =>
      [o.orderCode, o.destination.provinceName, o.destination.districtName, o.destination.wardName, o.clientHubID]
        .map((v) => `"${String(v).replaceAll('"', '""')}"`)
        .join(','),
    );
    await writeFile(path, `order_code,ToProvinceName,ToDistrictName,ToWardName,ClientHubID\n${lines.join('\n')}\n`);
    const result = await cli(
      ['price', '--for-orders', path, '--db', workspace.dbPath, '--rate', '200', '--concurrency', '8', '--json'],
      sandboxEnv(sandbox),
    );
    expect(result.code, result.stderr).toBe(0);
  }

  /** Rows in one query and not the other, both ways (0 when they hold the same rows). */
  async function difference(warehouse: Warehouse, a: string, b: string): Promise<number> {
    const [x, y] = [`SELECT * FROM (${a})`, `SELECT * FROM (${b})`];
    const reader = await warehouse.readAll(
      `SELECT count(*) AS n FROM ((${x} EXCEPT ALL ${y}) UNION ALL (${y} EXCEPT ALL ${x}))`,
    );
    return Number(reader.getRowObjectsJson()[0]!.n);
  }

  async function expectAuditAsComputed(): Promise<void> {
    const warehouse = await Warehouse.open(workspace.dbPath, { readOnly: true });
    try {
      const [counts] = (
        await warehouse.readAll(
          `SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM ${CHARGE_AUDIT_TABLE}) AS audit,
`,
        )
      ).getRowObjectsJson();
      expect(Number(counts!.audit)).toBe(Number(counts!.orders));
      expect(Number(counts!.orders)).toBeGreaterThan(0);
      expect(await difference(warehouse, `SELECT * FROM ${CHARGE_AUDIT_TABLE}`, chargeAuditQuery())).toBe(0);
      const stored = chargesQuery(DEFAULT_CHARGE_RULES);
      const computed = chargesQuery(DEFAULT_CHARGE_RULES, {}, { from: 'computed' });
      expect(await difference(warehouse, stored, computed)).toBe(0);
    } finally {
      await warehouse.close();
    }
  }

  it('after tracking loads of new and changed orders and quotes, is what the rows give when computed from scratch', async () => {
    const half = truth.slice(0, truth.length / 2);
    const all = await ordersCsv(workspace, 'all.csv', truth);
    await workspace.track(sandbox, [await ordersCsv(workspace, 'half.csv', half)]);
    await price(half.slice(0, 20), 'quotes-1.csv');
    // Every 6 hours for two days: orders move on, some are re-billed after delivery, cancelled or returned.
    for (let run = 0; run < 8; run++) {
      await postControl(sandbox, '/_sandbox/clock', { advanceHours: 6 });
      await workspace.track(sandbox, [all]);
      if (run === 2) await price(truth.slice(10, 70), 'quotes-2.csv');
    }
    await price(truth.slice(0, 30), 'quotes-3.csv');
    await expectAuditAsComputed();
    const warehouse = await Warehouse.open(workspace.dbPath, { readOnly: true });
    try {
      const [seen] = (
        await warehouse.readAll(
          `SELECT count(*) FILTER (WHERE quote_id IS NOT NULL) AS quoted, count(*) FILTER (WHERE total_at_delivery IS NOT NULL) AS rebilled,
                  count(*) FILTER (WHERE returned_in_history) AS returned, count(*) FILTER (WHERE cancelled_in_history) AS cancelled
           FROM ${CHARGE_AUDIT_TABLE}`,
        )
      ).getRowObjectsJson();
      // The audit's inputs all occur, so the comparison covers each.
      for (const figure of ['quoted', 'rebilled', 'returned', 'cancelled'])
        expect(Number(seen![figure]), figure).toBeGreaterThan(0);
    } finally {
      await warehouse.close();
    }
  }, 300_000);

  it('after a merge of a worker warehouse with newer snapshots, is what the rows give when computed from scratch', async () => {
    await postControl(sandbox, '/_sandbox/clock', { advanceHours: 12 });
    await worker.track(sandbox, [await ordersCsv(worker, 'later.csv', truth.slice(40))]);
    const result = await cli(['merge', worker.dbPath, '--into', workspace.dbPath], sandboxNow(sandbox));
    expect(result.code, result.stderr).toBe(0);
    await expectAuditAsComputed();
  }, 300_000);

  it('after replay --rebuild of the spooled runs, is what the rows give when computed from scratch', async () => {
    const warehouse = await Warehouse.open(workspace.dbPath);
    try {
      await replayRuns({
        warehouse,
        dataDir: workspace.dir,
        runIds: [],
        rebuild: true,
        logger: pino({ level: 'silent' }),
      });
    } finally {
      await warehouse.close();
    }
    await expectAuditAsComputed();
  }, 300_000);
});
