/**
 * The COD check end to end against the sandbox, as a shop runs it for one month: the built CLI tracks
 * every order of the sandbox's world, imports the 247Express statement the sandbox writes for the
 * month (its template, over HTTP), and runs `report cod` with the shop's own COD records. Each anomaly
 * the sandbox planted is flagged by its own check with its amount, and no clean order is flagged.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { type PayoutAnomalyTruth, PLANTED_PAYOUT_CHECKS } from '../../src/sandbox/world/payout-statements.js';
import { payoutLayout, TEMPLATE_LAYOUTS } from '../../src/sources/payout-layouts.js';
import { readJsonRows } from '../reports/report-fixtures.js';
import { getJson, httpGet, keysOf, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const MONTH = '2026-11';

describe('the sandbox writes a month of payout statements with planted COD anomalies', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let env: Record<string, string>;

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      start: '2026-12-01T00:00:00+07:00',
      historyDays: 30,
      accounts: 2,
      ordersPerAccount: 200,
    });
    workspace = await trackingWorkspace();
    env = {
      PARCEL_RECON_API_KEYS: Object.entries(keysOf(sandbox))
        .map(([alias, key]) => `${alias}=${key}`)
        .join(','),
      PARCEL_RECON_TRACKING_URL: sandbox.url,
      PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
    };
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('in the documented template, which the product reads with no layout of its own', async () => {
    const statement = await httpGet(`${sandbox.url}/_sandbox/payouts/statement?month=${MONTH}`);
    expect(statement.status).toBe(200);
    const header = statement.text.split('\r\n')[0]!.split(',');
    const layout = payoutLayout('247express', TEMPLATE_LAYOUTS.get('247express')!);
    const firstSpellings = [
      ...Object.values(layout.fields).map((names) => names[0]),
      ...layout.fees.map((fee) => fee.header),
    ];
    expect(header.sort()).toEqual(firstSpellings.sort());
    const refused = await httpGet(`${sandbox.url}/_sandbox/truth/payouts?month=2026-13`);
    expect([refused.status, refused.text]).toEqual([400, '{"error":"month: 2026-13; give month=YYYY-MM"}']);
  });

  it('track, payouts import, report cod: each planted anomaly flagged by its own check, no clean order', async () => {
    const orders = (await httpGet(`${sandbox.url}/_sandbox/truth/orders`)).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as OrderTruth);
    const codes = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...orders.map((o) => [o.orderCode, o.account]),
    ]);
    const db = workspace.dbPath;
    const tracked = await cli(['track', '--input', codes, '--db', db, '--json'], env);
    expect(tracked.code, tracked.stderr).toBe(0);

    const statement = join(workspace.dir, `bang-ke-${MONTH}.csv`);
    await writeFile(statement, (await httpGet(`${sandbox.url}/_sandbox/payouts/statement?month=${MONTH}`)).text);
    const imported = await cli(['payouts', 'import', statement, '--db', db, '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const summary = JSON.parse(imported.stdout) as { linesRead: number; imported: number; rejected: number };
    expect(summary.rejected).toBe(0);
    expect(summary.imported).toBe(summary.linesRead);
    expect(summary.linesRead).toBeGreaterThan(100);

    // The shop's own records: the COD it asked the carrier to collect.
    const shop = await workspace.writeCsv('shop.csv', [
      ['order_code', 'cod_amount'],
      ...orders.map((o) => [o.orderCode, String(o.codAmount)]),
    ]);
    const out = join(workspace.dir, 'reports');
    const report = await cli(
      ['report', 'cod', '--db', db, '--partner', shop, '--format', 'json', '--out', out, '--json'],
      env,
    );
    expect(report.code, report.stderr).toBe(0);
    const files = (JSON.parse(report.stdout) as { files: { table: string; path: string }[] }).files;
    const findings = await readJsonRows(files.find((f) => f.table === 'cod')!.path);

    const truth = await getJson<PayoutAnomalyTruth[]>(`${sandbox.url}/_sandbox/truth/payouts?month=${MONTH}`);
    // Every kind is planted, in every account.
    for (const account of sandbox.state.world.accounts)
      expect(new Set(truth.filter((t) => t.account === account.alias).map((t) => t.plantedAs)), account.alias).toEqual(
        new Set(PLANTED_PAYOUT_CHECKS),
      );
    const key = (f: { check: string; account: string; batch: unknown; order: unknown; atStake: number }) =>
      `${f.check} ${f.account} ${String(f.batch ?? '-')} ${String(f.order ?? '-')} ${f.atStake}`;
    const expected = truth.map((t) =>
      key({ check: t.check, account: t.account, batch: t.batchId, order: t.orderCode, atStake: t.atStake }),
    );
    const flagged = findings.map((f) =>
      key({
        check: String(f.finding),
        account: String(f.account_alias),
        batch: f.batch_id,
        order: f.order_code,
        atStake: Number(f.at_stake),
      }),
    );
    expect(flagged.sort()).toEqual(expected.sort());
  });
});
