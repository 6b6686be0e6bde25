/**
 * `track --carrier ghn` against the sandbox's GHN API, with the built CLI: GHN's orders land in the
 * warehouse beside 247Express's, their status log as their history, their statuses mapped to the
 * neutral set, their fees from the fee call; an unknown code settles as GHN_ORDER_NOT_FOUND; no token
 * reaches the output or the warehouse; the charges report flags each billing anomaly planted in GHN's
 * answers by its own check, and no clean order.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ghnShopId } from '../../src/sandbox/carriers/ghn/ghn-orders.js';
import { GHN_SANDBOX_BASE_PATH } from '../../src/sandbox/carriers/ghn/ghn-routes.js';
import type { GhnAnomalyTruth } from '../../src/sandbox/carriers/ghn/ghn-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import type { OrderPlan } from '../../src/sandbox/world/order-plan.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { getJson, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';

describe('track --carrier ghn', () => {
  let sandbox: RunningSandbox;
  let dir: string;
  let db: string;
  let created: OrderPlan[];
  let tokens: string[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      accounts: 2,
      ordersPerAccount: 20,
      carriers: { ghn: { ordersPerAccount: 60 } },
      lifecycle: { anomalyRate: 0.5 },
    });
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-ghn-track-'));
    db = join(dir, 'recon.duckdb');
    const now = sandbox.state.clock.now();
    created = [...sandbox.state.carrier('ghn').world.orders()].filter((plan) => plan.createdAt <= now);
    tokens = sandbox.state.carrier('ghn').world.accounts.map((account) => account.apiKey);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** The GHN accounts' tokens with their shops, as a shop gives them. */
  function ghnEnv(withShops = true): Record<string, string> {
    const accounts = sandbox.state.carrier('ghn').world.accounts;
    return {
      ...sandboxEnv(sandbox),
      PARCEL_RECON_API_KEYS: accounts
        .map((a) => `${a.alias}${withShops ? `:${ghnShopId(a)}` : ''}=${a.apiKey}`)
        .join(','),
      PARCEL_RECON_TRACKING_URL: `${sandbox.url}${GHN_SANDBOX_BASE_PATH}`,
    };
  }

  async function rows(query: string): Promise<Record<string, unknown>[]> {
    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      return (await warehouse.readAll(query)).getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      await warehouse.close();
    }
  }

  /** `report REPORT --carrier ghn` as JSON files into `out`: the rows of its `table`. */
  async function ghnReportRows<T>(
    report: string,
    table: string,
    out: string,
    env: Record<string, string> = sandboxEnv(sandbox),
  ): Promise<T[]> {
    const result = await cli(
      ['report', report, '--db', db, '--carrier', 'ghn', '--format', 'json', '--out', out, '--json'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const files = (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files;
    return JSON.parse(await readFile(files.find((f) => f.table === table)!.path, 'utf8')) as T[];
  }

  it("looks GHN's orders up and keeps them beside 247Express's", async () => {
    expect(created.length).toBeGreaterThan(10);
    const unknown = sandbox.state.carrier('ghn').world.orderCode(0, 99_999_998);
    const ghnInput = join(dir, 'ghn.csv');
    const lines = [
      ...created.map((plan) => `${plan.code},${plan.account.alias}`),
      `${unknown},${created[0]!.account.alias}`,
    ];
    await writeFile(ghnInput, `order_code,account\n${lines.join('\n')}\n`);
    const ghn = await cli(
      ['track', '--carrier', 'ghn', '--input', ghnInput, '--db', db, '--rate', '0', '--json', '--no-progress'],
      ghnEnv(),
    );
    expect(ghn.code, ghn.stderr).toBe(0);
    for (const token of tokens) expect(`${ghn.stdout}${ghn.stderr}`).not.toContain(token);

    const expressInput = join(dir, '247.csv');
    const expressCodes = [0, 1, 2].map((i) => sandbox.state.world.orderCode(0, i));
    await writeFile(
      expressInput,
      `order_code,account\n${expressCodes.map((code) => `${code},${sandbox.state.world.accounts[0]!.alias}`).join('\n')}\n`,
    );
    const express = await cli(
      ['track', '--input', expressInput, '--db', db, '--json', '--no-progress'],
      sandboxEnv(sandbox),
    );
    expect(express.code, express.stderr).toBe(0);

    expect(await rows('SELECT carrier, count(*) AS n FROM orders GROUP BY carrier ORDER BY carrier')).toEqual([
      { carrier: '247express', n: String(expressCodes.length) },
      { carrier: 'ghn', n: String(created.length) },
    ]);
    const now = sandbox.state.clock.now();
    const delivered = created.find((plan) => plan.events.some((event) => event.status === '30' && event.at <= now))!;
    const eventsSoFar = delivered.events.filter((event) => event.at <= now).length;
    const [order] = await rows(
      `SELECT o.status, o.account_alias, s.neutral_status, (SELECT count(*) FROM order_statuses AS h
         WHERE h.carrier = o.carrier AND h.order_code = o.order_code) AS history
       FROM orders AS o JOIN status_codes AS s ON s.carrier = o.carrier AND s.code = o.status
       WHERE o.carrier = 'ghn' AND o.order_code = '${delivered.code}'`,
    );
    expect(order).toEqual({
      status: 'delivered',
      account_alias: delivered.account.alias,
      neutral_status: 'delivered',
      // GHN's log leaves out the order's creation.
      history: String(eventsSoFar - 1),
    });
    expect(
      await rows(`SELECT carrier, outcome, error_code FROM lookup_results WHERE order_code = '${unknown}'`),
    ).toEqual([{ carrier: 'ghn', outcome: 'carrier_error', error_code: 'GHN_ORDER_NOT_FOUND' }]);
    expect(await rows("SELECT DISTINCT carrier FROM quota_usage WHERE carrier = 'ghn'")).toEqual([{ carrier: 'ghn' }]);
    const warehouseBytes = (await readFile(db)).toString('latin1');
    for (const token of tokens) expect(warehouseBytes).not.toContain(token);
  }, 120_000);

  it("replays GHN's runs from their raw spool as GHN's, with no lookup: every answer read, the orders rebuilt the same", async () => {
    const orders = () =>
      rows(
        `SELECT carrier, order_code, status, price, price_fr, total_service_cost, cod_collected, last_seen_at
         FROM orders ORDER BY carrier, order_code`,
      );
    const before = await orders();
    const replayed = await cli(['replay', '--db', db, '--json'], {});
    expect(replayed.code, replayed.stderr).toBe(0);
    const summary = JSON.parse(replayed.stdout) as {
      runs: { runId: string; snapshots: number; carrierErrors: number; unreadable: number }[];
      lookups: number;
    };
    const ghnRuns = await rows("SELECT DISTINCT run_id FROM lookup_results WHERE carrier = 'ghn'");
    const ghnReplayed = summary.runs.filter((run) => ghnRuns.some((r) => r.run_id === run.runId));
    expect(ghnReplayed.length).toBeGreaterThan(0);
    expect(ghnReplayed.reduce((sum, run) => sum + run.snapshots, 0)).toBe(created.length);
    // The unknown code's answer: GHN's error, read as one.
    expect(ghnReplayed.reduce((sum, run) => sum + run.carrierErrors, 0)).toBe(1);
    expect(summary.runs.every((run) => run.unreadable === 0)).toBe(true);
    expect(summary.lookups).toBe(0);
    expect(await orders()).toEqual(before);

    const rebuilt = await cli(['replay', '--rebuild', '--db', db, '--json'], {});
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(await orders()).toEqual(before);
  });

  it('keeps the fees of the fee call: the parts as charge lines, the payments as the total', async () => {
    const now = sandbox.state.clock.now();
    const pickedUp = created.find(
      (plan) => plan.anomaly === null && plan.events.some((event) => event.status === '23' && event.at <= now),
    );
    const fresh = created.find((plan) => plan.events.filter((event) => event.at <= now).length === 1);
    expect(pickedUp, 'a clean order picked up').toBeDefined();
    const [charged] = await rows(
      `SELECT o.price, o.total_service_cost, (SELECT sum(cost) FROM order_charges AS c
         WHERE c.carrier = o.carrier AND c.order_code = o.order_code) AS lines
       FROM orders AS o WHERE carrier = 'ghn' AND order_code = '${pickedUp!.code}'`,
    );
    expect(Number(charged!.price)).toBeGreaterThan(0);
    expect(charged!.lines).toBe(charged!.total_service_cost);
    if (fresh !== undefined) {
      // Not picked up: GHN charges nothing yet, and its fees are not asked.
      const [pending] = await rows(
        `SELECT price, total_service_cost FROM orders WHERE carrier = 'ghn' AND order_code = '${fresh.code}'`,
      );
      expect(pending).toEqual({ price: null, total_service_cost: null });
    }
  });

  it("lists GHN's orders whose status now is a failed delivery as awaiting handling, with GHN's reasons", async () => {
    const awaiting = await ghnReportRows<{ carrier: string; order_code: string }>(
      'failures',
      'failures-awaiting',
      join(dir, 'failures'),
    );
    const failedNow = await rows(
      "SELECT order_code FROM orders WHERE carrier = 'ghn' AND status = 'delivery_fail' ORDER BY order_code",
    );
    expect(failedNow.length).toBeGreaterThan(0);
    expect(awaiting.map((row) => row.order_code).sort()).toEqual(failedNow.map((row) => row.order_code));
    expect(new Set(awaiting.map((row) => row.carrier))).toEqual(new Set(['ghn']));
  });

  it("flags each billing anomaly planted in GHN's answers by its own check, and no clean order", async () => {
    const report = await ghnReportRows<Record<string, unknown>>('charges', 'charges', join(dir, 'reports'));
    expect(new Set(report.map((row) => row.carrier))).toEqual(new Set(['ghn']));
    const planted = (await getJson<GhnAnomalyTruth[]>(`${sandbox.url}/_sandbox/truth/anomalies?carrier=ghn`)).filter(
      (anomaly) => anomaly.observableNow,
    );
    expect(new Set(planted.map((anomaly) => anomaly.check))).toEqual(
      new Set(['lines_sum', 'cal_weight', 'return_not_returned', 'cancelled_charged']),
    );
    const flagged = report.filter((row) => Number(row.flags_failed) > 0);
    expect(flagged.map((row) => row.order_code).sort()).toEqual(planted.map((anomaly) => anomaly.orderCode).sort());
    const byCode = new Map(report.map((row) => [row.order_code, row]));
    for (const anomaly of planted)
      expect(byCode.get(anomaly.orderCode)?.[`${anomaly.check}_flag`], `${anomaly.orderCode} ${anomaly.kind}`).toBe(
        true,
      );
  });

  it("keeps GHN's COD facts, and the COD report says them of a delivered order no statement pays", async () => {
    const now = sandbox.state.clock.now();
    const deliveredAt = (plan: OrderPlan) => plan.events.find((event) => event.status === '30' && event.at <= now)?.at;
    const delivered = created.filter((plan) => plan.codAmount > 0 && deliveredAt(plan) !== undefined);
    expect(delivered.length).toBeGreaterThan(3);
    const facts = await rows(
      `SELECT order_code, cod_collected, epoch_ms(cod_collected_at) AS collected_at, cod_transferred,
              epoch_ms(cod_transferred_at) AS transferred_at
       FROM orders WHERE carrier = 'ghn' AND order_code IN (${delivered.map((plan) => `'${plan.code}'`).join(', ')})
       ORDER BY order_code`,
    );
    const transferDays = 3;
    expect(facts).toEqual(
      [...delivered]
        .sort((a, b) => a.code.localeCompare(b.code))
        .map((plan) => {
          const transferredAt = deliveredAt(plan)! + transferDays * 86_400_000;
          return {
            order_code: plan.code,
            cod_collected: true,
            collected_at: String(deliveredAt(plan)),
            cod_transferred: transferredAt <= now,
            transferred_at: transferredAt <= now ? String(transferredAt) : null,
          };
        }),
    );
    // Two weeks on, with no statement imported: every COD order delivered by now is unpaid past the default 7 days.
    const later = now + 14 * 86_400_000;
    const findings = await ghnReportRows<{ finding: string; carrier: string; order_code: string; detail: string }>(
      'cod',
      'cod',
      join(dir, 'cod'),
      { ...sandboxEnv(sandbox), PARCEL_RECON_NOW: new Date(later).toISOString() },
    );
    const unpaid = findings.filter((f) => f.finding === 'unpaid_delivered');
    expect(unpaid.map((f) => f.order_code).sort()).toEqual(delivered.map((plan) => plan.code).sort());
    for (const plan of delivered) {
      const found = unpaid.find((f) => f.order_code === plan.code)!;
      expect(found.carrier).toBe('ghn');
      // What the answer said when it was tracked.
      expect(found.detail).toMatch(
        deliveredAt(plan)! + transferDays * 86_400_000 <= now
          ? /the carrier says it transferred the COD on \d{4}-\d{2}-\d{2}$/
          : /the carrier says it collected the COD on \d{4}-\d{2}-\d{2}, not transferred$/,
      );
    }
  });

  it('refuses a GHN account without a shop before any lookup, in one line', async () => {
    const input = join(dir, 'one.csv');
    await writeFile(input, `order_code\n${created[0]!.code}\n`);
    const result = await cli(['track', '--carrier', 'ghn', '--input', input, '--db', db], ghnEnv(false));
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/names no shop/);
  });

  it('refuses a carrier it does not know, in one line naming the choices', async () => {
    const result = await cli(['track', '--carrier', 'vnpost', '--input', '-', '--db', db], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/vnpost.*247express or ghn/);
  });
});
