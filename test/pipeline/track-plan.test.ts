import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import type { TrackPlan } from '../../src/pipeline/tracking/track-plan.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';
import { sandboxLookups, type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const PER_KEY_LIMIT = 100;

describe('planning a run and capping it', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let csv: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 30, historyDays: 6 });
    workspace = await trackingWorkspace();
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
    csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...codes, ['EX1', 'hanoi-shop']]);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('prints per key what a run would spend against what is left, spends nothing, and --max-lookups caps the run', async () => {
    await workspace.track(sandbox, [csv], { refreshTerminal: false, quota: { perKeyDaily: PER_KEY_LIMIT } });
    await postControl(sandbox, '/_sandbox/clock', { advanceHours: 24 });
    const day = carrierDayOf(sandbox.state.clock.now());
    const terminal = await workspace.query<{ account_alias: string; n: number | string }>(
      'SELECT account_alias, count(*) FILTER (WHERE is_terminal) AS n FROM orders GROUP BY ALL ORDER BY ALL',
    );
    expect(terminal.some((row) => Number(row.n) > 0)).toBe(true);
    const limits = ['--per-key-limit', String(PER_KEY_LIMIT)];

    const planned = await cli(
      ['track', '--plan', '--json', '--input', csv, '--db', workspace.dbPath, ...limits],
      sandboxEnv(sandbox),
    );
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as TrackPlan;
    expect(plan.carrierDay).toBe(day);
    expect(plan.codes).toMatchObject({ read: 91, rejected: 1, duplicate: 0 });
    expect(plan.codes.terminalSkipped).toBe(terminal.reduce((n, row) => n + Number(row.n), 0));
    for (const key of plan.keys) {
      const skipped = Number(terminal.find((row) => row.account_alias === key.alias)?.n ?? 0);
      expect(key).toEqual({
        alias: key.alias,
        toLookUp: 30 - skipped,
        leftToday: PER_KEY_LIMIT,
        wouldSpend: 30 - skipped,
        wouldDefer: 0,
      });
    }
    expect(sandboxLookups(sandbox, day)).toEqual({});
    const text = await cli(
      ['track', '--plan', '--input', csv, '--db', workspace.dbPath, '--max-lookups', '7', ...limits],
      sandboxEnv(sandbox),
    );
    expect(text.stdout).toMatch(/nothing spent/);
    expect(text.stdout).toMatch(/all keys\s+to look up\s+\d+, left today\s+\d+: would spend 7, defer \d+/);
    // The plan leaves nothing staged behind.
    expect(await workspace.query(`SELECT * FROM run_inputs WHERE run_id LIKE 'plan-%'`)).toEqual([]);

    const capped = await cli(
      ['track', '--input', csv, '--db', workspace.dbPath, '--max-lookups', '7', '--json', ...limits],
      sandboxEnv(sandbox),
    );
    expect(capped.code, capped.stderr).toBe(3);
    const summary = JSON.parse(capped.stdout) as {
      counters: { deferredByReason: Record<string, number> };
      lookupsSpent: number;
    };
    expect(Object.values(sandboxLookups(sandbox, day)).reduce((n, v) => n + v, 0)).toBe(7);
    expect(summary.lookupsSpent).toBe(7);
    expect(summary.counters.deferredByReason.max_lookups).toBe(plan.total.toLookUp - 7);
  });

  it('shares --max-lookups between the accounts in turns, though the input lists one account after the other', async () => {
    const accounts = sandbox.state.world.accounts.map((account) => account.alias);
    expect(accounts).toHaveLength(3);
    const byAccount = [...sandbox.state.world.orders()]
      .map((plan) => [plan.code, plan.account.alias] as const)
      .sort((a, b) => accounts.indexOf(a[1]) - accounts.indexOf(b[1]));
    const input = await workspace.writeCsv('one-account-after-the-other.csv', [
      ['order_code', 'account'],
      ...byAccount,
    ]);
    const db = join(workspace.dir, 'shared.duckdb');
    const day = carrierDayOf(sandbox.state.clock.now());
    const before = sandboxLookups(sandbox, day);
    const args = ['track', '--input', input, '--db', db, '--max-lookups', '30', '--json'];

    const planned = await cli([...args, '--plan'], sandboxEnv(sandbox));
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as TrackPlan;
    expect(Object.fromEntries(plan.keys.map((key) => [key.alias, key.wouldSpend]))).toEqual(
      Object.fromEntries(accounts.map((alias) => [alias, 10])),
    );

    const capped = await cli(args, sandboxEnv(sandbox));
    expect(capped.code, capped.stderr).toBe(3);
    const after = sandboxLookups(sandbox, day);
    expect(Object.fromEntries(accounts.map((alias) => [alias, (after[alias] ?? 0) - (before[alias] ?? 0)]))).toEqual(
      Object.fromEntries(accounts.map((alias) => [alias, 10])),
    );
    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      const looked = (
        await warehouse.readAll(
          `SELECT account_alias, count(*) FILTER (WHERE outcome <> 'deferred') AS looked_up,
                  count(*) FILTER (WHERE error_code = 'MAX_LOOKUPS') AS deferred
           FROM lookup_results GROUP BY ALL ORDER BY ALL`,
        )
      ).getRowObjectsJS();
      expect(looked).toEqual(
        [...accounts].sort().map((alias) => ({ account_alias: alias, looked_up: 10n, deferred: 20n })),
      );
    } finally {
      await warehouse.close();
    }
  });
  it('plans the codes of an .xlsx workbook as those of the same CSV, a row with an error cell rejected', async () => {
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias]);
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Đơn hàng');
    sheet.addRows([['order_code', 'account'], ...codes, [{ error: '#N/A' }, 'hanoi-shop']]);
    const xlsx = join(workspace.dir, 'orders.xlsx');
    await book.xlsx.writeFile(xlsx);
    const plan = async (input: string) => {
      const result = await cli(
        ['track', '--plan', '--json', '--input', input, '--db', workspace.dbPath],
        sandboxEnv(sandbox),
      );
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as TrackPlan;
    };
    const fromCsv = await plan(csv);
    const fromWorkbook = await plan(xlsx);
    expect(fromWorkbook).toEqual(fromCsv);
    expect(fromWorkbook.codes).toMatchObject({ read: codes.length + 1, rejected: 1 });
  });
});
