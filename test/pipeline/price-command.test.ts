/**
 * `parcel-recon price` against the sandbox over real HTTP: quotes for the sandbox's own orders equal its
 * pricing to the unit and keep the published relations; invalid rows are refused and never sent; a
 * carrier refusal and a malformed answer are stored as failed quotes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { findProvince } from '../../src/sandbox/world/geography.js';
import { findServiceType, priceParcel } from '../../src/sandbox/world/tariff.js';
import { keysOf, startTestSandbox, truthOrders } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';
import { PRICE_REQUEST_CSV_HEADER } from '../support/customer-operations.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

interface QuoteRow {
  quote_id: string;
  order_code: string | null;
  account_alias: string;
  ok: boolean;
  error_code: string | null;
  error_message: string | null;
  total_service_cost: string | null;
  cal_weight: number | null;
  weight: number | null;
  real_weight: number;
  length: number;
  width: number;
  height: number;
  lines_total: string | null;
  lines: string | null;
}

describe('parcel-recon price', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let truth: OrderTruth[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 40, seed: 5 });
    workspace = await trackingWorkspace();
    truth = await truthOrders(sandbox);
    const orders = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...truth.map((o) => [o.orderCode, o.account]),
    ]);
    const tracked = await workspace.track(sandbox, [orders]);
    expect(tracked.counters.ok).toBe(truth.length);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  async function writeCsv(name: string, rows: unknown[][]): Promise<string> {
    const path = join(workspace.dir, name);
    await writeFile(path, stringify(rows));
    return path;
  }

  async function quotesOf(runId: string): Promise<QuoteRow[]> {
    return workspace.query<QuoteRow>(`
      SELECT q.quote_id, q.order_code, q.account_alias, q.ok, q.error_code, q.error_message, CAST(q.total_service_cost AS VARCHAR) AS total_service_cost,
             q.cal_weight, q.weight, q.real_weight, q.length, q.width, q.height,
             (SELECT CAST(sum(cost) AS VARCHAR) FROM price_quote_lines l WHERE l.quote_id = q.quote_id) AS lines_total,
             (SELECT string_agg(service_id || '=' || CAST(cost AS VARCHAR), ',' ORDER BY line_no) FROM price_quote_lines l WHERE l.quote_id = q.quote_id) AS lines
      FROM price_quotes q WHERE q.run_id = '${runId}' ORDER BY q.order_code`);
  }

  it('quotes every tracked order (--for-orders) exactly as the sandbox prices it, with the published relations', async () => {
    const destinations = await writeCsv('destinations.csv', [
      ['order_code', 'ToProvinceName', 'ToDistrictName', 'ToWardName', 'ClientHubID'],
      ...truth.map((o) => [
        o.orderCode,
        o.destination.provinceName,
        o.destination.districtName,
        o.destination.wardName,
        o.clientHubID,
      ]),
    ]);
    const result = await cli(
      [
        'price',
        '--for-orders',
        destinations,
        '--db',
        workspace.dbPath,
        '--rate',
        '200',
        '--concurrency',
        '8',
        '--json',
      ],
      sandboxEnv(sandbox),
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { runId: string; quoted: number; rejected: number; failed: number };
    expect(summary).toMatchObject({ quoted: truth.length, rejected: 0, failed: 0 });
    // Logs and output name the key's alias, never the key.
    for (const key of Object.values(keysOf(sandbox))) expect(result.stdout + result.stderr).not.toContain(key);
    expect(result.stderr).toContain('hanoi-shop');

    const quotes = await quotesOf(summary.runId);
    expect(quotes).toHaveLength(truth.length);
    const billed = new Map(
      (
        await workspace.query<{ order_code: string; total: string; price_fr: string }>(
          'SELECT order_code, CAST(total_service_cost AS VARCHAR) AS total, CAST(price_fr AS VARCHAR) AS price_fr FROM orders',
        )
      ).map((o) => [o.order_code, o]),
    );
    let comparedWithBilled = 0;
    for (const quote of quotes) {
      const order = truth.find((o) => o.orderCode === quote.order_code)!;
      const plan = sandbox.state.world.findOrder(order.orderCode)!;
      const expected = priceParcel(
        findServiceType(order.serviceTypeID)!,
        plan.account.hubProvince,
        findProvince(order.destination.provinceName)!,
        plan,
      );
      expect(quote.ok).toBe(true);
      expect(quote.account_alias).toBe(order.account);
      // To the unit: the DECIMAL total and every line.
      expect(Number(quote.total_service_cost)).toBe(expected.totalServiceCost);
      expect(quote.lines).toBe(expected.lines.map((l) => `${l.serviceID}=${l.cost}.0000`).join(','));
      // The published relations.
      expect(quote.lines_total).toBe(quote.total_service_cost);
      expect(Math.abs(quote.cal_weight! - (quote.length * quote.width * quote.height) / 6000)).toBeLessThanOrEqual(
        0.005 + 1e-9,
      );
      expect(quote.weight).toBe(Math.max(quote.real_weight, quote.cal_weight!));
      // An order billed cleanly (no anomaly, no return charge, not cancelled: billed 0) was billed what the quote says.
      const stored = billed.get(order.orderCode)!;
      if (order.anomaly === null && Number(stored.price_fr) === 0 && order.status !== '18') {
        expect(stored.total).toBe(quote.total_service_cost);
        comparedWithBilled++;
      }
    }
    expect(comparedWithBilled).toBeGreaterThan(truth.length / 2);
  });

  it('refuses invalid rows with their reason without sending them, and stores a carrier refusal as a failed quote', async () => {
    const order = truth[0]!;
    const plan = sandbox.state.world.findOrder(order.orderCode)!;
    const good = [
      order.destination.provinceName,
      order.destination.districtName,
      order.destination.wardName,
      plan.length,
      plan.width,
      plan.height,
      plan.realWeight,
      order.clientHubID,
      order.serviceTypeID,
    ];
    const input = await writeCsv('requests.csv', [
      [...PRICE_REQUEST_CSV_HEADER],
      [...good, order.orderCode, order.account],
      [...good.slice(0, 3), 'ten', ...good.slice(4), 'BAD-LENGTH', order.account],
      [good[0], good[1], '', ...good.slice(3), 'NO-WARD', order.account],
      [...good.slice(0, 6), '0', ...good.slice(7), 'ZERO-WEIGHT', order.account],
      ['Atlantis', ...good.slice(1), 'NOWHERE', order.account],
    ]);
    const result = await cli(['price', '--input', input, '--db', workspace.dbPath, '--json'], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      runId: string;
      quoted: number;
      rejected: number;
      carrierErrors: number;
      requestsSent: number;
      problems: { orderCode: string; reason: string }[];
      rejectsFile: string;
    };
    expect(summary).toMatchObject({ quoted: 1, rejected: 3, carrierErrors: 1, requestsSent: 2 });
    const reasons = Object.fromEntries(summary.problems.map((p) => [p.orderCode, p.reason]));
    expect(reasons['BAD-LENGTH']).toBe('Length is not a number');
    expect(reasons['NO-WARD']).toBe('ToWardName is empty');
    expect(reasons['ZERO-WEIGHT']).toBe('RealWeight must be greater than 0');
    expect(summary.rejectsFile).toMatch(/\.csv$/);

    const quotes = await quotesOf(summary.runId);
    expect(quotes.map((q) => [q.order_code, q.ok, q.error_code])).toEqual([
      [order.orderCode, true, null],
      ['NOWHERE', false, 'CARRIER_ERROR'],
    ]);
    expect(quotes[1]!.error_message).toContain('Province not found: Atlantis');
    expect(quotes[1]!.lines).toBeNull();
  });

  it('retries a transient failure, and stores an answer still malformed after every retry as a failed quote', async () => {
    const [first, second] = truth;
    const destinations = await writeCsv('two.csv', [
      ['ordercode', 'ToProvinceName', 'ToDistrictName', 'ToWardName'],
      ...[first!, second!].map((o) => [
        o.orderCode,
        o.destination.provinceName,
        o.destination.districtName,
        o.destination.wardName,
      ]),
    ]);
    sandbox.state.faults.script({ kind: 'server_error', operation: 'price', times: 2 });
    const hubs = ['--client-hub-id', first!.clientHubID];
    const retried = await cli(
      [
        'price',
        '--for-orders',
        destinations,
        ...hubs,
        '--db',
        workspace.dbPath,
        '--concurrency',
        '1',
        '--retry-min-ms',
        '5',
        '--json',
      ],
      sandboxEnv(sandbox),
    );
    expect(retried.code, retried.stderr).toBe(0);
    const retriedSummary = JSON.parse(retried.stdout) as {
      quoted: number;
      requestsSent: number;
      carrierErrors: number;
    };
    // The second order's account has another hub than the one given: the carrier refuses it.
    expect(retriedSummary.quoted + retriedSummary.carrierErrors).toBe(2);
    expect(retriedSummary.requestsSent).toBe(4);

    // One order, so that all three malformed answers are its three attempts.
    const one = await writeCsv('one.csv', [
      ['ordercode', 'ToProvinceName', 'ToDistrictName', 'ToWardName'],
      [first!.orderCode, first!.destination.provinceName, first!.destination.districtName, first!.destination.wardName],
    ]);
    sandbox.state.faults.script({ kind: 'malformed', operation: 'price', times: 3 });
    const malformed = await cli(
      [
        'price',
        '--for-orders',
        one,
        ...hubs,
        '--db',
        workspace.dbPath,
        '--concurrency',
        '1',
        '--attempts',
        '3',
        '--retry-min-ms',
        '5',
        '--json',
      ],
      sandboxEnv(sandbox),
    );
    expect(malformed.code).toBe(1);
    const summary = JSON.parse(malformed.stdout) as { runId: string; failed: number };
    expect(summary.failed).toBe(1);
    const failed = await quotesOf(summary.runId);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error_code: 'LOOKUP_MALFORMED', total_service_cost: null, lines: null });
    expect(failed[0]!.error_message).toContain('malformed');
  });

  it('answers a missing source or a CSV without the request columns with one line and exit 2', async () => {
    const none = await cli(['price', '--db', workspace.dbPath], sandboxEnv(sandbox));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no quote requests to read');
    const wrong = await writeCsv('wrong.csv', [
      ['order_code', 'province'],
      ['EX1', 'x'],
    ]);
    const result = await cli(['price', '--input', wrong, '--db', workspace.dbPath], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('no ToProvinceName, ToDistrictName, ToWardName, Length');
    expect(result.stderr).not.toContain('    at ');
  });
});
