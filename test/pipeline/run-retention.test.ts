import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf, epochMsToInstant } from '../../src/carriers/247express/contract.js';
import { installReportViews } from '../../src/reports/report-views.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { refreshChargeAudit } from '../../src/warehouse/charge-audit-rows.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { compactionFileOf } from '../../src/warehouse/warehouse-compaction.js';
import { DAY_MS, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli, startCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { readWarehouseCatalog } from '../warehouse/warehouse-catalog.js';

const HISTORY_DAYS = 200;
/** Codes every history night looks up again: their rows of old nights are what a prune removes. */
const POOL_CODES = 5_000;
/** The quota ledger's days: longer than prune keeps it (400 days before today's carrier day). */
const QUOTA_HISTORY_DAYS = 420;
/** A night of history started this long before its day count, so no night sits on the 90-day cut. */
const NIGHT_SHIFT_MS = 6 * 3_600_000;
/** A run cut off 150 days ago: never finished, so its data is kept whole. */
const CUT_OFF_RUN = 'history-cut-off';

const nightId = (day: number) => `history-${String(day).padStart(3, '0')}`;

/** Every table of the warehouse. */
async function everyTable(path: string): Promise<string[]> {
  const warehouse = await Warehouse.open(path, { readOnly: true });
  try {
    const reader = await warehouse.readAll(
      "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary ORDER BY 1",
    );
    return reader.getRowObjectsJS().map((row) => row.table_name as string);
  } finally {
    await warehouse.close();
  }
}

/** Each table's row count and a sum of its rows' hashes: equal contents, in any order, give equal sums. */
async function contentsOf(path: string, tables: readonly string[]): Promise<Record<string, string>> {
  const warehouse = await Warehouse.open(path, { readOnly: true });
  try {
    const sums: Record<string, string> = {};
    for (const table of tables) {
      const reader = await warehouse.readAll(
        `SELECT count(*) || ' rows, ' || coalesce(sum(hash(t)::HUGEINT), 0) AS sum FROM ${table} AS t`,
      );
      sums[table] = String(reader.getRowObjectsJS()[0]?.sum);
    }
    return sums;
  } finally {
    await warehouse.close();
  }
}

async function catalogOf(path: string) {
  const warehouse = await Warehouse.open(path, { readOnly: true });
  try {
    const { rowCounts: _counts, ...catalog } = await readWarehouseCatalog(warehouse);
    return catalog;
  } finally {
    await warehouse.close();
  }
}

describe('prune: 200 nights of runs pruned at 90 days', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let nowMs: number;
  let env: Record<string, string>;
  let partnerCsv: string;
  let inputRows: number;

  /** Builds 200 nights of history around one real tracking run: a night's runs row, inputs, lookups, raw spool and rejects. */
  async function buildHistory(): Promise<void> {
    const warehouse = await Warehouse.open(workspace.dbPath);
    try {
      const now = epochMsToInstant(nowMs);
      const days = `range(1, ${HISTORY_DAYS + 1}) AS d(day)`;
      const started = `($now::TIMESTAMPTZ - to_milliseconds(day * ${DAY_MS} - ${NIGHT_SHIFT_MS}))`;
      const run = `'history-' || lpad(CAST(day AS VARCHAR), 3, '0')`;
      await warehouse.run(
        `INSERT INTO runs (run_id, job, source, started_at, finished_at, carrier_day, codes_read, exit_code, exit_state, summary)
         SELECT ${run}, 'nightly-track', 'history.csv', ${started}, ${started} + INTERVAL 1 HOUR,
                CAST(${started} + INTERVAL 7 HOUR AS DATE), ${POOL_CODES}, 0, 'ok', '{}'
         FROM ${days}`,
        { now },
      );
      await warehouse.run(
        `INSERT INTO runs (run_id, job, source, started_at, carrier_day, exit_state)
         VALUES ($id, 'nightly-track', 'history.csv', $now::TIMESTAMPTZ - INTERVAL 150 DAY, CAST($now::TIMESTAMPTZ - INTERVAL 150 DAY AS DATE), 'running')`,
        { now, id: CUT_OFF_RUN },
      );
      const nights = `(SELECT ${run} AS run_id, ${started} AS started_at, day FROM ${days} UNION ALL
                       SELECT $id, $now::TIMESTAMPTZ - INTERVAL 150 DAY, 150)`;
      await warehouse.run(
        `INSERT INTO run_inputs SELECT '247express', n.run_id, i, 'POOL' || i, 'shop1', 'history.csv:' || (i + 2), NULL, NULL
         FROM ${nights} AS n, range(${POOL_CODES}) AS r(i)`,
        { now, id: CUT_OFF_RUN },
      );
      await warehouse.run(
        `INSERT INTO lookup_results SELECT '247express', n.run_id, 'POOL' || i, 'shop1', 'ok', NULL, NULL, 1, 'history.csv:' || (i + 2),
                n.started_at + INTERVAL 1 HOUR
         FROM ${nights} AS n, range(${POOL_CODES}) AS r(i)`,
        { now, id: CUT_OFF_RUN },
      );
      // A night's orders: the real run's orders again, accepted that night, each looked up by that night only.
      const renamed = `'HIST' || lpad(CAST(day AS VARCHAR), 3, '0') || '-' || order_code`;
      const shifted = (column: string) => `${column} - to_milliseconds(day * ${DAY_MS})`;
      for (const statement of [
        `INSERT INTO orders SELECT orders.* REPLACE (${renamed} AS order_code, ${shifted('accept_date')} AS accept_date, ${shifted('order_date')} AS order_date, ${run} AS last_run_id)
           FROM orders, ${days} WHERE order_code NOT LIKE 'HIST%'`,
        `INSERT INTO order_charges SELECT order_charges.* REPLACE (${renamed} AS order_code)
           FROM order_charges, ${days} WHERE order_code NOT LIKE 'HIST%'`,
        `INSERT INTO order_statuses SELECT order_statuses.* REPLACE (${renamed} AS order_code, ${shifted('"time"')} AS "time")
           FROM order_statuses, ${days} WHERE order_code NOT LIKE 'HIST%'`,
        `INSERT INTO delivery_failures SELECT delivery_failures.* REPLACE (${renamed} AS order_code, ${shifted('attempted_at')} AS attempted_at, ${run} AS run_id)
           FROM delivery_failures, ${days} WHERE order_code NOT LIKE 'HIST%'`,
        `INSERT INTO lookup_results SELECT carrier, ${run}, ${renamed}, account_alias, 'ok', NULL, NULL, 1, NULL, ${started} + INTERVAL 1 HOUR
           FROM orders, ${days} WHERE order_code NOT LIKE 'HIST%'`,
        `INSERT INTO quota_usage SELECT '247express', CAST($now::TIMESTAMPTZ + INTERVAL 7 HOUR AS DATE) - CAST(day AS INTEGER), alias, 100, $now::TIMESTAMPTZ
           FROM range(0, ${QUOTA_HISTORY_DAYS}) AS d(day), (VALUES ('shop1'), ('shop2')) AS k(alias) ON CONFLICT DO NOTHING`,
        `INSERT INTO quota_limit_answers SELECT '247express', CAST($now::TIMESTAMPTZ + INTERVAL 7 HOUR AS DATE) - CAST(day AS INTEGER), 'shop1', $now::TIMESTAMPTZ
           FROM range(0, ${QUOTA_HISTORY_DAYS}, 7) AS d(day) ON CONFLICT DO NOTHING`,
      ])
        await warehouse.run(statement, statement.includes('$now') ? { now } : undefined);
      // As the loaders do for the orders they write.
      await refreshChargeAudit(warehouse);
      // As every command's writable open leaves it.
      await installReportViews(warehouse);
    } finally {
      await warehouse.close();
    }
    for (const id of [...Array.from({ length: HISTORY_DAYS }, (_, i) => nightId(i + 1)), CUT_OFF_RUN]) {
      await mkdir(join(workspace.dir, 'raw', id), { recursive: true });
      await writeFile(join(workspace.dir, 'raw', id, '0000000000000-1-000000001.ndjson.gz'), Buffer.alloc(1_000, 7));
      await mkdir(join(workspace.dir, 'rejects'), { recursive: true });
      await writeFile(join(workspace.dir, 'rejects', `${id}.csv`), 'origin,order_code,reject_code,reason\n');
    }
  }

  /** The charges, failures and reconcile reports over the kept range, file by file. */
  async function keptRangeReports(db: string, name: string): Promise<Record<string, string>> {
    const from = carrierDayOf(nowMs - 89 * DAY_MS);
    const to = carrierDayOf(nowMs);
    const files: Record<string, string> = {};
    for (const [report, extra] of [
      ['charges', []],
      ['failures', []],
      ['reconcile', ['--partner', partnerCsv]],
    ] as const) {
      const out = join(workspace.dir, 'reports', name, report);
      const result = await cli(['report', report, '--db', db, '--from', from, '--to', to, '--out', out, ...extra], env);
      expect(result.code, result.stderr).toBe(0);
      for (const file of await readdir(out)) files[`${report}/${file}`] = await readFile(join(out, file), 'utf8');
    }
    return files;
  }

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 15 });
    workspace = await trackingWorkspace();
    const rows: string[][] = [['order_code', 'account']];
    for (const account of sandbox.state.world.accounts)
      for (let i = 0; i < 15; i++) rows.push([sandbox.state.world.orderCode(account.index, i), account.alias]);
    rows.push(['not-a-code', sandbox.state.world.accounts[0]!.alias]);
    inputRows = rows.length - 1;
    await workspace.track(sandbox, [await workspace.writeCsv('orders.csv', rows)]);
    nowMs = sandbox.state.clock.now();
    env = { PARCEL_RECON_NOW: new Date(nowMs).toISOString() };
    partnerCsv = await workspace.writeCsv('partner.csv', [
      ['order_code', 'invoiced_amount'],
      ...rows.slice(1, 20).map(([code]) => [code!, '1000']),
      ['POOL1', '5'],
      ['H120-NOPE', '5'],
    ]);
    await buildHistory();
  }, 300_000);

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('--dry-run counts what would go and changes nothing', async () => {
    const tables = await everyTable(workspace.dbPath);
    const before = await contentsOf(workspace.dbPath, tables);
    const result = await cli(['prune', '--older-than', '90d', '--db', workspace.dbPath, '--dry-run', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      dryRun: true,
      runsPruned: 110,
      unfinishedRunsKept: 1,
      rows: {
        run_inputs: 110 * POOL_CODES,
        lookup_results: 110 * POOL_CODES,
        quota_usage: 2 * (QUOTA_HISTORY_DAYS - 401),
      },
      rawSpool: { folders: 110, bytes: 110 * 1_000 },
      rejectsFiles: { files: 110 },
    });
    // Carrier days 406 and 413 before today's; day 399 and those after stay.
    expect(summary.rows.quota_limit_answers).toBe(2);
    expect(await contentsOf(workspace.dbPath, tables)).toEqual(before);
    expect(existsSync(join(workspace.dir, 'raw', nightId(200)))).toBe(true);

    const text = await cli(['prune', '--older-than', '90d', '--db', workspace.dbPath, '--dry-run', '--compact'], env);
    expect(text.stdout).toContain(
      `would remove lookup_results ${110 * POOL_CODES} rows, run_inputs ${110 * POOL_CODES} rows`,
    );
    expect(text.stdout).toContain('would compact');
    expect(await contentsOf(workspace.dbPath, tables)).toEqual(before);
  }, 120_000);

  it('refuses an age it cannot read in one line, exit 2', async () => {
    for (const age of ['90', '90days', '0d', '-5d', '1.5d']) {
      const result = await cli(['prune', '--older-than', age, '--db', workspace.dbPath], env);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain('--older-than: expected a number of days such as 90d');
    }
  });

  it('waits for the warehouse like any writer, then refuses while another process holds it, exit 4', async () => {
    const holder = await Warehouse.open(workspace.dbPath);
    try {
      const result = await cli(['prune', '--older-than', '90d', '--db', workspace.dbPath], env);
      expect(result.code).toBe(4);
      expect(result.stderr).toContain(`warehouse ${workspace.dbPath} is in use by another process`);
    } finally {
      await holder.close();
    }
  }, 60_000);

  it('a SIGKILL while compacting leaves the warehouse whole, and the next compaction removes what it left', async () => {
    const copy = join(workspace.dir, 'killed', 'recon.duckdb');
    await mkdir(join(workspace.dir, 'killed'));
    await copyFile(workspace.dbPath, copy);
    const tables = await everyTable(copy);
    const catalog = await catalogOf(copy);
    // Nothing is old enough at 1000 days, the quota ledger included: the compaction copies the whole warehouse.
    const before = await contentsOf(copy, tables);
    const child = startCli(['prune', '--older-than', '1000d', '--db', copy, '--compact'], env);
    const compacting = compactionFileOf(copy);
    while (!existsSync(compacting)) {
      if (child.exitCode !== null) throw new Error(`prune ended before compacting: ${child.output().stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    child.kill('SIGKILL');
    await child.ended;
    expect(existsSync(compacting)).toBe(true);
    expect(await catalogOf(copy)).toEqual(catalog);
    expect(await contentsOf(copy, tables)).toEqual(before);

    const again = await cli(['prune', '--older-than', '1000d', '--db', copy, '--compact', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(compacting)).toBe(false);
    expect(await catalogOf(copy)).toEqual(catalog);
    expect(await contentsOf(copy, tables)).toEqual(before);
  }, 180_000);

  it('prunes the old runs, keeps everything else, and --compact leaves a smaller file with the same tables and rows', async () => {
    const reportsBefore = await keptRangeReports(workspace.dbPath, 'before');
    const tables = await everyTable(workspace.dbPath);
    // The ledger of changed partitions records what the prune removed.
    const keptTables = tables.filter(
      (t) =>
        !['lookup_results', 'run_inputs', 'quota_usage', 'quota_limit_answers', 'snapshot_partition_changes'].includes(
          t,
        ),
    );
    const keptBefore = await contentsOf(workspace.dbPath, keptTables);

    const result = await cli(['prune', '--older-than', '90d', '--db', workspace.dbPath, '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ dryRun: false, runsPruned: 110, compaction: null });

    const pruned = "run_id LIKE 'history-___' AND run_id > 'history-090'";
    const counts = await workspace.query<{ what: string; n: string }>(
      `SELECT 'inputs of pruned runs' AS what, count(*) AS n FROM run_inputs WHERE ${pruned}
       UNION ALL SELECT 'inputs of kept nights', count(*) FROM run_inputs WHERE run_id BETWEEN 'history-001' AND 'history-090'
       UNION ALL SELECT 'inputs of the cut-off run', count(*) FROM run_inputs WHERE run_id = '${CUT_OFF_RUN}'
       UNION ALL SELECT 'inputs of the real run', count(*) FROM run_inputs WHERE run_id NOT LIKE 'history-%'
       UNION ALL SELECT 'pool lookups of pruned runs', count(*) FROM lookup_results WHERE order_code LIKE 'POOL%' AND ${pruned}
       UNION ALL SELECT 'pool lookups of the cut-off run', count(*) FROM lookup_results WHERE run_id = '${CUT_OFF_RUN}'
       UNION ALL SELECT 'night orders looked up once, by a pruned run', count(*) FROM lookup_results
         WHERE order_code LIKE 'HIST%' AND ${pruned}
       UNION ALL SELECT 'runs rows', count(*) FROM runs
       UNION ALL SELECT 'quota days', count(DISTINCT carrier_day) FROM quota_usage
       UNION ALL SELECT 'quota limit answers', count(*) FROM quota_limit_answers`,
    );
    const orders = Number(
      (await workspace.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE order_code NOT LIKE 'HIST%'"))[0]!
        .n,
    );
    expect(Object.fromEntries(counts.map((row) => [row.what, Number(row.n)]))).toEqual({
      'inputs of pruned runs': 0,
      'inputs of kept nights': 90 * POOL_CODES,
      'inputs of the cut-off run': POOL_CODES,
      'inputs of the real run': inputRows,
      'pool lookups of pruned runs': 0,
      'pool lookups of the cut-off run': POOL_CODES,
      // An order's latest lookup stays: reconcile reads it.
      'night orders looked up once, by a pruned run': 110 * orders,
      'runs rows': HISTORY_DAYS + 2,
      // The quota ledger is kept 400 days before today's carrier day, whatever the runs' age.
      'quota days': 401,
      'quota limit answers': 58,
    });
    expect(existsSync(join(workspace.dir, 'raw', nightId(91)))).toBe(false);
    expect(existsSync(join(workspace.dir, 'raw', nightId(90)))).toBe(true);
    expect(existsSync(join(workspace.dir, 'raw', CUT_OFF_RUN))).toBe(true);
    expect(existsSync(join(workspace.dir, 'rejects', `${nightId(150)}.csv`))).toBe(false);
    expect(existsSync(join(workspace.dir, 'rejects', `${CUT_OFF_RUN}.csv`))).toBe(true);
    expect(await contentsOf(workspace.dbPath, keptTables)).toEqual(keptBefore);
    expect(await keptRangeReports(workspace.dbPath, 'pruned')).toEqual(reportsBefore);

    const catalog = await catalogOf(workspace.dbPath);
    const allTables = await contentsOf(workspace.dbPath, tables);
    const sizeBefore = (await stat(workspace.dbPath)).size;
    const compacted = await cli(['prune', '--older-than', '90d', '--db', workspace.dbPath, '--compact', '--json'], env);
    expect(compacted.code, compacted.stderr).toBe(0);
    const { compaction } = JSON.parse(compacted.stdout);
    const sizeAfter = (await stat(workspace.dbPath)).size;
    expect(compaction.bytesAfter).toBe(sizeAfter);
    expect(sizeAfter).toBeLessThan(sizeBefore / 2);
    expect(await catalogOf(workspace.dbPath)).toEqual(catalog);
    expect(await contentsOf(workspace.dbPath, tables)).toEqual(allTables);
    expect(await keptRangeReports(workspace.dbPath, 'compacted')).toEqual(reportsBefore);
  }, 300_000);
});
