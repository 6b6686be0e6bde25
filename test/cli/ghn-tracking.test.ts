/**
 * `track --carrier ghn` against the sandbox's GHN API, with the built CLI: GHN's orders land in the
 * warehouse beside 247Express's, their status log as their history, their statuses mapped to the
 * neutral set; an unknown code settles as GHN_ORDER_NOT_FOUND; no token reaches the output or the
 * warehouse.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GHN_SANDBOX_BASE_PATH } from '../../src/sandbox/ghn/ghn-routes.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import type { OrderPlan } from '../../src/sandbox/world/order-plan.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';

describe('track --carrier ghn', () => {
  let sandbox: RunningSandbox;
  let dir: string;
  let db: string;
  let created: OrderPlan[];
  let tokens: string[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ accounts: 2, ordersPerAccount: 20, ghn: { ordersPerAccount: 30 } });
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-ghn-track-'));
    db = join(dir, 'recon.duckdb');
    const now = sandbox.state.clock.now();
    created = [...sandbox.state.ghnWorld.orders()].filter((plan) => plan.createdAt <= now);
    tokens = sandbox.state.ghnWorld.accounts.map((account) => account.apiKey);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function rows(query: string): Promise<Record<string, unknown>[]> {
    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      return (await warehouse.readAll(query)).getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      await warehouse.close();
    }
  }

  it("looks GHN's orders up and keeps them beside 247Express's", async () => {
    expect(created.length).toBeGreaterThan(10);
    const unknown = sandbox.state.ghnWorld.orderCode(0, 99_999_998);
    const ghnInput = join(dir, 'ghn.csv');
    const lines = [
      ...created.map((plan) => `${plan.code},${plan.account.alias}`),
      `${unknown},${created[0]!.account.alias}`,
    ];
    await writeFile(ghnInput, `order_code,account\n${lines.join('\n')}\n`);
    const env = {
      ...sandboxEnv(sandbox),
      PARCEL_RECON_API_KEYS: sandbox.state.ghnWorld.accounts.map((a) => `${a.alias}=${a.apiKey}`).join(','),
      PARCEL_RECON_TRACKING_URL: `${sandbox.url}${GHN_SANDBOX_BASE_PATH}`,
    };
    const ghn = await cli(
      ['track', '--carrier', 'ghn', '--input', ghnInput, '--db', db, '--json', '--no-progress'],
      env,
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

  it('refuses a carrier it does not know, in one line naming the choices', async () => {
    const result = await cli(['track', '--carrier', 'vnpost', '--input', '-', '--db', db], sandboxEnv(sandbox));
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/vnpost.*247express or ghn/);
  });
});
