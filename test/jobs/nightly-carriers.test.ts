/**
 * One nightly job for a shop with both carriers: 247Express as the configured carrier, GHN in
 * `alsoTrack` with its own address and keys file, both reading one CSV with a `carrier` column (each
 * run takes its own carrier's rows). Both land in one warehouse, each tracking step named after its
 * carrier, and the night's reports show both carriers' orders; no GHN token reaches the output or the
 * warehouse; a row naming a carrier the product does not know is rejected.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ghnShopId } from '../../src/sandbox/carriers/ghn/ghn-orders.js';
import { GHN_SANDBOX_BASE_PATH } from '../../src/sandbox/carriers/ghn/ghn-routes.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { keysOf, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

interface JobSummary {
  exitCode: number;
  steps: { step: string; exitCode: number; summary: Record<string, unknown> }[];
}

describe('jobs run nightly with alsoTrack', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let config: string;
  let expressCodes: string[];
  let ghnCodes: string[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 15, carriers: { ghn: { ordersPerAccount: 15 } } });
    workspace = await trackingWorkspace();
    const now = sandbox.state.clock.now();
    const rows = (world: typeof sandbox.state.world) =>
      [...world.orders()].filter((plan) => plan.createdAt <= now).map((plan) => [plan.code, plan.account.alias]);
    const expressRows = rows(sandbox.state.world);
    const ghnRows = rows(sandbox.state.carrier('ghn').world);
    expressCodes = expressRows.map(([code]) => code!);
    ghnCodes = ghnRows.map(([code]) => code!);
    const csv = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account', 'carrier'],
      ...expressRows.map((row) => [...row, '247Express']),
      ...ghnRows.map((row) => [...row, 'GHN']),
      [expressCodes[0]!, expressRows[0]![1]!, 'vnpost'],
    ]);
    const ghnKeys = join(workspace.dir, 'ghn-keys.json');
    await writeFile(
      ghnKeys,
      JSON.stringify(
        Object.fromEntries(
          sandbox.state.carrier('ghn').world.accounts.map((a) => [a.alias, { key: a.apiKey, shopId: ghnShopId(a) }]),
        ),
      ),
    );
    await chmod(ghnKeys, 0o600);
    config = join(workspace.dir, 'parcel-recon.config.json');
    await writeFile(
      config,
      JSON.stringify({
        warehouse: workspace.dbPath,
        trackingUrl: sandbox.url,
        carrier: '247express',
        source: { inputs: [csv] },
        alsoTrack: [
          {
            carrier: 'ghn',
            trackingUrl: `${sandbox.url}${GHN_SANDBOX_BASE_PATH}`,
            keysFile: ghnKeys,
            source: { inputs: [csv] },
          },
        ],
        track: { concurrency: 8, retryMinMs: 5 },
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    await workspace?.dispose();
  });

  it("tracks both carriers into one warehouse, and the night's reports show both", async () => {
    const env = {
      PARCEL_RECON_API_KEYS: Object.entries(keysOf(sandbox))
        .map(([alias, key]) => `${alias}=${key}`)
        .join(','),
      PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
    };
    const result = await cli(['jobs', 'run', 'nightly', '--config', config, '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const night = JSON.parse(result.stdout) as JobSummary;
    expect(night.steps.map((step) => [step.step, step.exitCode]).slice(0, 2)).toEqual([
      ['track', 0],
      ['track-ghn', 0],
    ]);
    for (const account of sandbox.state.carrier('ghn').world.accounts)
      expect(`${result.stdout}${result.stderr}`).not.toContain(account.apiKey);

    const warehouse = await Warehouse.open(workspace.dbPath, { readOnly: true });
    try {
      const counts = (
        await warehouse.readAll('SELECT carrier, count(*) AS n FROM orders GROUP BY carrier ORDER BY carrier')
      ).getRowObjectsJson();
      expect(counts).toEqual([
        { carrier: '247express', n: String(expressCodes.length) },
        { carrier: 'ghn', n: String(ghnCodes.length) },
      ]);
      const runs = (await warehouse.readAll('SELECT job FROM runs ORDER BY job')).getRowObjectsJson();
      expect(runs.map((run) => run.job)).toEqual(expect.arrayContaining(['nightly-track', 'nightly-track-ghn']));
      // Each run read its own rows and the unknown carrier's; the other carrier's it left alone.
      const inputs = (
        await warehouse.readAll(
          `SELECT r.job, i.carrier, count(*) AS n, count(i.reject_code) AS rejected, min(i.reject_code) AS code
           FROM run_inputs AS i JOIN runs AS r USING (run_id) GROUP BY ALL ORDER BY r.job`,
        )
      ).getRowObjectsJson();
      expect(inputs).toEqual([
        {
          job: 'nightly-track',
          carrier: '247express',
          n: String(expressCodes.length + 1),
          rejected: '1',
          code: 'UNKNOWN_CARRIER',
        },
        {
          job: 'nightly-track-ghn',
          carrier: 'ghn',
          n: String(ghnCodes.length + 1),
          rejected: '1',
          code: 'UNKNOWN_CARRIER',
        },
      ]);
    } finally {
      await warehouse.close();
    }
    const bytes = (await readFile(workspace.dbPath)).toString('latin1');
    for (const account of sandbox.state.carrier('ghn').world.accounts) expect(bytes).not.toContain(account.apiKey);

    const charges = night.steps.find((step) => step.step === 'charges report')!.summary as {
      files: { table: string; path: string }[];
    };
    const rows = parse(await readFile(charges.files.find((f) => f.table === 'charges')!.path), {
      columns: true,
      bom: true,
    }) as { carrier: string }[];
    expect(new Set(rows.map((row) => row.carrier))).toEqual(new Set(['247express', 'ghn']));
  }, 180_000);
});
