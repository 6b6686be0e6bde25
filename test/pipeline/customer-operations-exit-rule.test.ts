/** Price and images runs: a key the carrier refuses stops at once and the run exits 1. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import type { CustomerRunOptions } from '../../src/pipeline/customer-operation-run.js';
import { runOrderImages } from '../../src/pipeline/images-run.js';
import { csvPriceRequests } from '../../src/pipeline/price-inputs.js';
import { runPriceQuotes } from '../../src/pipeline/price-run.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { csvSource } from '../../src/sources/csv-source.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { customerRunOptions, priceRequestRows, withWarehouse } from '../support/customer-operations.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const ORDERS_PER_ACCOUNT = 20;
const CONCURRENCY = 2;
/** Requests a run has handed over at once: those in the limiter and those waiting for it (the dispatch window). */
const IN_FLIGHT = CONCURRENCY * 2;
const WRONG_KEY = 'not-a-key-of-this-carrier';

describe('price and images runs with a key the carrier refuses', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let wrong: string;
  let options: () => CustomerRunOptions;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: ORDERS_PER_ACCOUNT });
    workspace = await trackingWorkspace();
    const accounts = sandbox.state.world.accounts;
    wrong = accounts[0]!.alias;
    const keys = new KeyRing(accounts.map((a) => [a.alias, a.alias === wrong ? WRONG_KEY : a.apiKey]));
    options = () =>
      customerRunOptions(sandbox, workspace, keys, { pace: { requestsPerSecond: 1_000, concurrency: CONCURRENCY } });
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('images: sends at most the requests in flight with the refused key, defers its other orders, exits 1', async () => {
    const plans = [...sandbox.state.world.orders()];
    const csv = await workspace.writeCsv('images.csv', [
      ['order_code', 'account'],
      ...plans.map((p) => [p.code, p.account.alias]),
    ]);
    const summary = await withWarehouse(workspace, (warehouse) =>
      runOrderImages({ ...options(), warehouse, sources: [csvSource(csv, {})] }),
    );

    expect(summary.exitCode).toBe(1);
    const rows = await workspace.query<{ outcome: string; error_code: string | null; n: number | string }>(
      `SELECT outcome, error_code, count(*) AS n FROM lookup_results
       WHERE run_id = '${summary.runId}' AND account_alias = '${wrong}' GROUP BY ALL ORDER BY ALL`,
    );
    const byOutcome = Object.fromEntries(rows.map((r) => [`${r.outcome} ${r.error_code}`, Number(r.n)]));
    const sent = byOutcome['transport_error LOOKUP_HTTP_STATUS'] ?? 0;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(IN_FLIGHT);
    expect(byOutcome['deferred KEY_NOT_FOUND']).toBe(ORDERS_PER_ACCOUNT - sent);
    expect(summary.deferred).toBe(ORDERS_PER_ACCOUNT - sent);
    // Every code has exactly one row.
    const [counts] = await workspace.query<{ rows: number | string; codes: number | string }>(
      `SELECT count(*) AS rows, count(DISTINCT order_code) AS codes FROM lookup_results WHERE run_id = '${summary.runId}'`,
    );
    expect(Number(counts!.rows)).toBe(plans.length);
    expect(Number(counts!.codes)).toBe(plans.length);
    const warnings = workspace.logLines.filter((line) => line.includes("the carrier refused this account's API key"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(wrong);
    expect(workspace.logLines.join('\n')).not.toContain(WRONG_KEY);
  });

  it('price: sends at most the requests in flight with the refused key, keeps a row per request, exits 1', async () => {
    const truth = [...sandbox.state.truth.orders()];
    const csv = await workspace.writeCsv('requests.csv', priceRequestRows(sandbox));
    const summary = await withWarehouse(workspace, (warehouse) =>
      runPriceQuotes({ ...options(), warehouse, source: csvPriceRequests(csv) }),
    );

    expect(summary.exitCode).toBe(1);
    const rows = await workspace.query<{ error_code: string | null; n: number | string }>(
      `SELECT error_code, count(*) AS n FROM price_quotes
       WHERE run_id = '${summary.runId}' AND account_alias = '${wrong}' GROUP BY ALL ORDER BY ALL`,
    );
    const byCode = Object.fromEntries(rows.map((r) => [String(r.error_code), Number(r.n)]));
    const sent = byCode.LOOKUP_HTTP_STATUS ?? 0;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(IN_FLIGHT);
    expect(byCode.KEY_NOT_FOUND).toBe(ORDERS_PER_ACCOUNT - sent);
    expect(summary.quoted + summary.carrierErrors).toBe(truth.length - ORDERS_PER_ACCOUNT);
    const [counts] = await workspace.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM price_quotes WHERE run_id = '${summary.runId}'`,
    );
    expect(Number(counts!.n)).toBe(truth.length);
  });
});
