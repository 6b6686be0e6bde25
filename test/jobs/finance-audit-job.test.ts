import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { keysOf, startTestSandbox, truthOrders } from '../sandbox/sandbox-http.js';
import { cli as runCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

interface JobSummary {
  exitCode: number;
  steps: { step: string; exitCode: number; summary: Record<string, unknown> }[];
}

describe('jobs run finance-audit', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 25, historyDays: 10, lifecycle: { anomalyRate: 0 } });
    workspace = await trackingWorkspace();
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it("quotes the period's delivered orders once, exports charges against the invoices and reconciles them", async () => {
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias]);
    await workspace.track(sandbox, [await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...codes])]);
    const delivered = await workspace.query<{ order_code: string; total: string }>(
      "SELECT order_code, CAST(total_service_cost AS VARCHAR) AS total FROM orders WHERE status = '30' ORDER BY order_code",
    );
    expect(delivered.length).toBeGreaterThan(5);
    const truth = new Map((await truthOrders(sandbox)).map((order) => [order.orderCode, order]));
    const destinations = await workspace.writeCsv('destinations.csv', [
      ['order_code', 'ToProvinceName', 'ToDistrictName', 'ToWardName', 'ClientHubID'],
      ...[...truth.values()].map((o) => [
        o.orderCode,
        o.destination.provinceName,
        o.destination.districtName,
        o.destination.wardName,
        o.clientHubID,
      ]),
    ]);
    // The partner's invoice: every delivered order at the carrier's total, but one invoiced 5,000 dong more.
    const [mischarged, ...rest] = delivered;
    const invoices = await workspace.writeCsv('invoices.csv', [
      ['order_code', 'invoiced_amount'],
      [mischarged!.order_code, String(Number(mischarged!.total) + 5000)],
      ...rest.map((o) => [o.order_code, String(Number(o.total))]),
    ]);
    const config = join(workspace.dir, 'parcel-recon.config.json');
    await writeFile(
      config,
      JSON.stringify({
        warehouse: workspace.dbPath,
        baseUrl: sandbox.url,
        price: { rate: 200, concurrency: 8 },
        financeAudit: { invoices, destinations },
        reports: { periodDays: 30 },
        notify: { on: ['failed', 'charges'] },
      }),
    );
    const hook = await startWebhookReceiver();
    const env = {
      PARCEL_RECON_NOTIFY_URL: `${hook.url}/hook`,
      PARCEL_RECON_API_KEYS: Object.entries(keysOf(sandbox))
        .map(([alias, key]) => `${alias}=${key}`)
        .join(','),
      PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
    };

    const first = await runCli(['jobs', 'run', 'finance-audit', '--config', config, '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout) as JobSummary;
    expect(summary.steps.map((s) => s.step)).toEqual(['price', 'charges report', 'reconcile report']);
    const price = summary.steps[0]!.summary as { quoted: number; ordersToQuote: number };
    expect(price.ordersToQuote).toBe(delivered.length);
    expect(price.quoted).toBe(delivered.length);
    const quoted = await workspace.query<{ order_code: string }>(
      'SELECT order_code FROM price_quotes WHERE ok ORDER BY order_code',
    );
    expect(quoted.map((q) => q.order_code)).toEqual(delivered.map((d) => d.order_code));

    const reconcile = summary.steps[2]!.summary as {
      files: { table: string; path: string; rows: number }[];
      figures: { findings: Record<string, number> };
    };
    expect(reconcile.figures.findings.invoice_mismatch).toBe(1);
    const findings = reconcile.files.find((f) => f.table === 'reconcile')!;
    expect(await readFile(findings.path, 'utf8')).toContain(mischarged!.order_code);
    const charges = summary.steps[1]!.summary as {
      figures: { checks: { check_name: string; orders_flagged: unknown }[] };
    };
    expect(Number(charges.figures.checks.find((c) => c.check_name === 'invoice')?.orders_flagged)).toBe(1);
    // The reconcile findings, with their money, in the job's summary and in its alert beside the charges'.
    const reconcileLines = (summary.steps[2]!.summary as { findings: string[] }).findings;
    // The money first: the invoice's 5,000 VND before the orders the invoice does not list, though they are more.
    expect(reconcileLines).toEqual([
      `${delivered.length} partner lines read`,
      'invoice_mismatch: 1 findings, 5,000 VND',
      expect.stringMatching(/^missing_from_partner: \d+ findings$/),
    ]);
    expect(hook.posts).toHaveLength(1);
    const alert = (hook.posts[0]!.body as { text: string }).text;
    expect(alert).toContain(
      `\nreconcile: ${delivered.length} partner lines read\n  invoice_mismatch: 1 findings, 5,000 VND\n`,
    );
    expect(alert).toContain('\n  invoice: 1 orders, 5,000 VND\n');

    // A second audit asks no quote again: every delivered order has one; it prints its reports' findings.
    const second = await runCli(['jobs', 'run', 'finance-audit', '--config', config], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('  price: exit 0\n');
    expect(second.stdout).toContain(
      `  reconcile report: exit 0\n    ${delivered.length} partner lines read\n    invoice_mismatch: 1 findings, 5,000 VND\n`,
    );
    const lastSummary = JSON.parse(await readFile(/summary (\S+)/.exec(second.stdout)![1]!, 'utf8')) as JobSummary;
    expect((lastSummary.steps[0]!.summary as { ordersToQuote: number }).ordersToQuote).toBe(0);
    await hook.close();
  });
});
