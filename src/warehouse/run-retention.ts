import type { CarrierInstant } from '../carriers/carrier-time.js';
import { ofOrdersIn, sameOrder } from './order-keys.js';
import { recordChangedRows } from './partition-change-ledger.js';
import { countOf } from './result-values.js';
import { RUN_STATE_RUNNING } from './run-store.js';
import { PARTITIONED_TABLES } from './snapshot-partitions.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

/** What a prune keeps: the per-run rows of runs started before `startedBefore`, and the quota ledger's days before `quotaFrom` go. */
export interface RetentionCut {
  readonly startedBefore: CarrierInstant;
  /** The first carrier day (YYYY-MM-DD) whose quota ledger is kept. */
  readonly quotaFrom: string;
}

/** The rows a prune removes (or would remove), per table. */
export interface PrunedRows {
  readonly lookup_results: number;
  readonly run_inputs: number;
  readonly quota_usage: number;
  readonly quota_limit_answers: number;
}

export interface RetentionPlan {
  /** The finished runs started before the cut: their per-run rows and files go. */
  readonly runIds: readonly string[];
  /** Runs started before the cut that have not finished (running, or cut off and resumable): kept whole. */
  readonly unfinishedRunsKept: number;
  readonly rows: PrunedRows;
}

const PRUNED_RUNS = 'retention_pruned_runs';
const KEPT_LOOKUPS = 'retention_kept_lookups';

/**
 * The WHERE clause of each table's rows that go. An order's latest lookup_results row stays even when
 * its run is pruned: reconcile reads it as the order's last lookup, and it is one row per order code,
 * not per night.
 */
const PRUNED_WHERE = {
  lookup_results: `run_id IN (SELECT run_id FROM ${PRUNED_RUNS})
    AND NOT EXISTS (
      SELECT 1 FROM ${KEPT_LOOKUPS} AS k WHERE ${sameOrder('k', 'lookup_results')} AND k.run_id = lookup_results.run_id
    )`,
  run_inputs: `run_id IN (SELECT run_id FROM ${PRUNED_RUNS})`,
  quota_usage: 'carrier_day < $quotaFrom::DATE',
  quota_limit_answers: 'carrier_day < $quotaFrom::DATE',
} as const satisfies Record<keyof PrunedRows, string>;

async function markPrunedRuns(sql: SqlRunner, cut: RetentionCut): Promise<{ runIds: string[]; unfinished: number }> {
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${PRUNED_RUNS} AS
     SELECT run_id FROM runs WHERE started_at < $startedBefore::TIMESTAMPTZ AND exit_state <> $running`,
    { startedBefore: cut.startedBefore, running: RUN_STATE_RUNNING },
  );
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${KEPT_LOOKUPS} AS
     SELECT carrier, order_code, run_id FROM lookup_results
     WHERE ${ofOrdersIn(`(SELECT carrier, order_code FROM lookup_results WHERE run_id IN (SELECT run_id FROM ${PRUNED_RUNS}))`)}
     QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY finished_at DESC, run_id DESC) = 1`,
  );
  const runIds = (await sql.readAll(`SELECT run_id FROM ${PRUNED_RUNS} ORDER BY run_id`))
    .getRowObjectsJS()
    .map((row) => row.run_id as string);
  const unfinished = await sql.readAll(
    'SELECT count(*) AS n FROM runs WHERE started_at < $startedBefore::TIMESTAMPTZ AND exit_state = $running',
    { startedBefore: cut.startedBefore, running: RUN_STATE_RUNNING },
  );
  return { runIds, unfinished: countOf(unfinished.getRowObjectsJS()[0]?.n) };
}

/**
 * Removes (or with `dryRun` only counts) the per-run rows of the finished runs started before the cut,
 * and the quota ledger's older days, in one transaction. A run that has not finished is never
 * touched: it may be running, or be resumed on its carrier day. Every run's `runs` row stays.
 */
export async function pruneRunRows(warehouse: Warehouse, cut: RetentionCut, dryRun: boolean): Promise<RetentionPlan> {
  const work = async (sql: SqlRunner): Promise<RetentionPlan> => {
    const { runIds, unfinished } = await markPrunedRuns(sql, cut);
    const rows = {} as Record<keyof PrunedRows, number>;
    for (const [table, where] of Object.entries(PRUNED_WHERE) as [keyof PrunedRows, string][]) {
      const parameters = where.includes('$quotaFrom') ? { quotaFrom: cut.quotaFrom } : undefined;
      const count = () => sql.readAll(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, parameters);
      if (!dryRun && PARTITIONED_TABLES.has(table))
        await recordChangedRows(sql, table, `SELECT * FROM ${table} WHERE ${where}`, parameters);
      rows[table] = dryRun
        ? countOf((await count()).getRowObjectsJS()[0]?.n)
        : await sql.run(`DELETE FROM ${table} WHERE ${where}`, parameters);
    }
    // Replaced by the next prune when a failure leaves them; a rolled-back transaction takes them with it.
    await sql.run(`DROP TABLE ${PRUNED_RUNS}; DROP TABLE ${KEPT_LOOKUPS}`);
    return { runIds, unfinishedRunsKept: unfinished, rows };
  };
  return dryRun ? warehouse.exclusive(work) : warehouse.transaction(work);
}
