import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { callbackAsksLookup } from '../carriers/carrier-definition-sql.js';
import type { CarrierInstant } from '../carriers/carrier-time.js';
import { spoolFileRows, withNdjsonSpool } from './ndjson-spool.js';
import { ofOrdersIn, sameOrder } from './order-keys.js';
import { recordChangedRows } from './partition-change-ledger.js';
import { countOf } from './result-values.js';
import { sqlText } from './sql-literals.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

/** One row a run read from its source, valid or rejected, in source order. */
export interface RunInputRow {
  /** Position in the source, from 1; with the run id, the row's key. */
  readonly seq: number;
  readonly orderCode: string;
  readonly accountAlias: string | null;
  readonly origin: string;
  /** Why the row will not be looked up (bad code, unknown account...), or null for a valid row. */
  readonly rejectCode: string | null;
  readonly rejectReason: string | null;
}

/** An order code to look up in a run, with the account and source row of its first valid occurrence. */
export interface RunWorkItem {
  readonly orderCode: string;
  readonly accountAlias: string | null;
  readonly origin: string;
  /** Whether the warehouse held the order when the work list was made: a stored row to compare and replace. */
  readonly storedBefore: boolean;
}

export interface RunWorkOptions {
  /** Look up orders whose stored status is terminal too (normally they cannot change any more). */
  readonly refreshTerminal: boolean;
}

export interface RunInputCounts {
  readonly read: number;
  readonly rejected: number;
  /** Valid rows whose code an earlier valid row of the run already has. */
  readonly duplicate: number;
}

const DEFAULT_WORK_CHUNK = 1000;

/** The fields of a run input's spool line. */
const INPUT_ROW_FIELDS = {
  seq: 'BIGINT',
  orderCode: 'VARCHAR',
  accountAlias: 'VARCHAR',
  origin: 'VARCHAR',
  rejectCode: 'VARCHAR',
  rejectReason: 'VARCHAR',
} as const;

/**
 * Appends rows a run read, of `carrier`'s orders, in one statement over an NDJSON spool file. A row
 * whose seq the run already has is left as it is, so re-reading a source on resume adds nothing twice.
 */
export async function appendRunInputs(
  warehouse: Warehouse,
  runId: string,
  rows: readonly RunInputRow[],
  spoolDir: string,
  carrier: string,
): Promise<void> {
  if (rows.length === 0) return;
  const lines = rows.map((row) =>
    JSON.stringify({
      seq: row.seq,
      orderCode: row.orderCode,
      accountAlias: row.accountAlias,
      origin: row.origin,
      rejectCode: row.rejectCode,
      rejectReason: row.rejectReason,
    }),
  );
  await withNdjsonSpool(spoolDir, 'run-inputs', async (spool) => {
    const file = await spool.write(lines);
    const insert = async (sql: SqlRunner) => {
      await sql.run(
        `INSERT OR IGNORE INTO run_inputs
         SELECT $carrier, $runId, seq, orderCode, accountAlias, origin, rejectCode, rejectReason
         FROM ${spoolFileRows('$file', file, INPUT_ROW_FIELDS)}`,
        { carrier, runId, file: file.path },
      );
      await recordChangedRows(sql, 'run_inputs', 'SELECT $carrier AS carrier, $runId AS run_id', { carrier, runId });
    };
    await warehouse.loadTransaction(insert, `${rows.length} input rows`, ['memoryLimit']);
  });
}

/**
 * The run's work: each valid code once (its first valid row gives account and origin), without the
 * codes that already have a lookup result in this run other than a deferral (a resume skips what was
 * committed, and looks up again what was left for later) and, unless refreshTerminal, without orders
 * whose stored status or latest status callback is terminal, unless a callback since the order's last
 * lookup asks for one (its fees, COD or weights changed: `CarrierCallbacks.asksLookup`). Columns: order_code,
 * account_alias, origin, seq (of the first row), last_seen_at (null for an order never seen).
 *
 * The stored orders are read through the run's codes (`IN (SELECT ... FROM first_valid)`), so DuckDB
 * filters their scan by those codes instead of reading every stored order; a run's lookup results are
 * found by its run id, whose rows sit together. The latest callback is ranked as in the
 * order_latest_callbacks view, but over the run's codes' callbacks only: DuckDB does not push a filter
 * on the view's result into its window, which would rank every order's callbacks.
 */
const RUN_WORK = `
  WITH first_valid AS (
    SELECT carrier, order_code, account_alias, origin, seq
    FROM run_inputs
    WHERE run_id = $runId AND reject_code IS NULL
    QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY seq) = 1
  ),
  lookups_asked AS (
    SELECT carrier, order_code, max(event_time) AS asked_at
    FROM callback_events
    WHERE ${ofOrdersIn('first_valid')} AND ${callbackAsksLookup()}
    GROUP BY carrier, order_code
  )
  SELECT first_valid.*, stored.last_seen_at
  FROM first_valid
  LEFT JOIN (
    SELECT carrier, order_code, last_seen_at, is_terminal FROM orders WHERE ${ofOrdersIn('first_valid')}
  ) AS stored ON ${sameOrder('stored', 'first_valid')}
  LEFT JOIN lookups_asked AS asked ON ${sameOrder('asked', 'first_valid')}
  WHERE NOT EXISTS (
      SELECT 1 FROM lookup_results AS done
      WHERE done.run_id = $runId AND ${sameOrder('done', 'first_valid')} AND done.outcome <> 'deferred'
    )
    AND ($refreshTerminal OR asked.asked_at > stored.last_seen_at OR (
      NOT coalesce(stored.is_terminal, false)
      AND (first_valid.carrier, first_valid.order_code) NOT IN (
        SELECT (c.carrier, c.order_code)
        FROM callback_events AS c LEFT JOIN status_codes AS s ON s.carrier = c.carrier AND s.code = c.status
        WHERE ${ofOrdersIn('first_valid', 'c')}
        QUALIFY row_number() OVER (PARTITION BY c.carrier, c.order_code ORDER BY c.event_time DESC, c.received_at DESC) = 1
          AND coalesce(s.is_terminal, false)
      )
    ))`;

/** Rows of the work list's Parquet row groups: a chunk's read decodes one or two of them, not a large part of the list. */
const WORK_LIST_ROW_GROUP = 10_000;

/**
 * Yields the run's work (see RUN_WORK) in chunks, the accounts taking turns: each account's first
 * code, then each one's second, and so on, so that a run cut short by its budget, its rate or a stop
 * has looked up about as many codes of each account. Within an account, and within a turn,
 * never-seen orders come first, then the least recently seen, then source order.
 *
 * The list is fixed when iteration starts: it is ranked once into a Parquet file in `workDir`, and
 * chunks are read from it by rank. So a million codes never sit in JS memory, the connection stays
 * free for the loads between chunks (a streaming result would be cut off by them), and loading the
 * chunks already yielded does not shift the rest. A file, not a temporary table: a temporary table
 * would hold the whole list in DuckDB's memory for the whole run, where the file's compressed row
 * groups are read from disk as the chunks come.
 */
export async function* streamRunWork(
  warehouse: Warehouse,
  runId: string,
  options: RunWorkOptions & { readonly workDir: string; readonly chunkSize?: number },
): AsyncGenerator<RunWorkItem[]> {
  const chunkSize = options.chunkSize ?? DEFAULT_WORK_CHUNK;
  await mkdir(options.workDir, { recursive: true });
  const workList = join(options.workDir, `work-list-${process.pid}-${randomUUID()}.parquet`);
  await warehouse.run(
    `COPY (
       SELECT order_code, account_alias, origin, last_seen_at IS NOT NULL AS stored_before,
              row_number() OVER (ORDER BY account_turn, last_seen_at ASC NULLS FIRST, seq) AS work_rank
       FROM (
         SELECT *, row_number() OVER (PARTITION BY account_alias ORDER BY last_seen_at ASC NULLS FIRST, seq) AS account_turn
         FROM (${RUN_WORK})
       )
       ORDER BY work_rank
     ) TO ${sqlText(workList)} (FORMAT parquet, ROW_GROUP_SIZE ${WORK_LIST_ROW_GROUP})`,
    { runId, refreshTerminal: options.refreshTerminal },
  );
  try {
    let lastRank = 0;
    for (;;) {
      const reader = await warehouse.readAll(
        `SELECT order_code, account_alias, origin, stored_before, work_rank FROM read_parquet($workList)
         WHERE work_rank > $lastRank ORDER BY work_rank LIMIT $chunkSize`,
        { workList, lastRank, chunkSize },
      );
      const rows = reader.getRowObjectsJS();
      if (rows.length === 0) return;
      lastRank = Number(rows[rows.length - 1]?.work_rank);
      yield rows.map((row) => ({
        orderCode: row.order_code as string,
        accountAlias: row.account_alias as string | null,
        origin: row.origin as string,
        storedBefore: row.stored_before as boolean,
      }));
      if (rows.length < chunkSize) return;
    }
  } finally {
    await rm(workList, { force: true });
  }
}

/**
 * Records the run's work that has no result yet as deferred, in one statement: the codes a stopped
 * run did not reach, with no attempt. A code that already has a result in the run, a deferral
 * included, keeps it.
 */
export async function deferRunWork(
  warehouse: Warehouse,
  runId: string,
  options: RunWorkOptions & {
    readonly finishedAt: CarrierInstant;
    readonly errorCode: string;
    readonly errorMessage: string;
  },
): Promise<number> {
  return warehouse.transaction(async (sql) => {
    const deferred = await sql.run(
      `INSERT INTO lookup_results
       SELECT carrier, $runId, order_code, account_alias, 'deferred', $errorCode, $errorMessage, 0, origin, $finishedAt::TIMESTAMPTZ
       FROM (${RUN_WORK}) AS work
       WHERE NOT EXISTS (SELECT 1 FROM lookup_results AS done WHERE done.run_id = $runId AND ${sameOrder('done', 'work')})`,
      { ...options, runId },
    );
    if (deferred > 0) await recordRunLookups(sql, runId, options.finishedAt);
    return deferred;
  });
}

/** Records the partitions of lookup_results rows of the run finished at `finishedAt`: its carriers' of that month. */
function recordRunLookups(sql: SqlRunner, runId: string, finishedAt: CarrierInstant): Promise<void> {
  return recordChangedRows(
    sql,
    'lookup_results',
    'SELECT DISTINCT carrier, $finishedAt::TIMESTAMPTZ AS finished_at FROM run_inputs WHERE run_id = $runId',
    { runId, finishedAt },
  );
}

/** How many codes streamRunWork would yield now: the total for a progress display. */
export async function countRunWork(warehouse: Warehouse, runId: string, options: RunWorkOptions): Promise<number> {
  const reader = await warehouse.readAll(`SELECT count(*) AS work FROM (${RUN_WORK})`, {
    runId,
    refreshTerminal: options.refreshTerminal,
  });
  return countOf(reader.getRowObjectsJS()[0]?.work);
}

/** Rows the run read, of which rejected, and valid rows repeating a code. */
export async function runInputCounts(warehouse: Warehouse, runId: string): Promise<RunInputCounts> {
  const reader = await warehouse.readAll(
    `SELECT count(*) AS read,
            count(*) FILTER (WHERE reject_code IS NOT NULL) AS rejected,
            count(*) FILTER (WHERE reject_code IS NULL) - count(DISTINCT (carrier, order_code)) FILTER (WHERE reject_code IS NULL) AS duplicate
     FROM run_inputs WHERE run_id = $runId`,
    { runId },
  );
  const row = reader.getRowObjectsJS()[0];
  return { read: countOf(row?.read), rejected: countOf(row?.rejected), duplicate: countOf(row?.duplicate) };
}

/**
 * Records the run's rejected codes in `lookup_results` (outcome `rejected`, the reject code as the
 * error code, no attempt), once per code, unless the same code also came in a valid row.
 */
export async function recordRejectedInputs(
  warehouse: Warehouse,
  runId: string,
  finishedAt: CarrierInstant,
): Promise<number> {
  return warehouse.transaction(async (sql) => {
    const rejected = await sql.run(
      `INSERT OR IGNORE INTO lookup_results
       SELECT carrier, run_id, order_code, account_alias, 'rejected', reject_code, reject_reason, 0, origin, $finishedAt::TIMESTAMPTZ
       FROM run_inputs AS rejected
       WHERE run_id = $runId AND reject_code IS NOT NULL AND order_code <> ''
         AND NOT EXISTS (
           SELECT 1 FROM run_inputs AS valid
           WHERE valid.run_id = $runId AND ${sameOrder('valid', 'rejected')} AND valid.reject_code IS NULL
         )
       QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY seq) = 1`,
      { runId, finishedAt },
    );
    if (rejected > 0) await recordRunLookups(sql, runId, finishedAt);
    return rejected;
  });
}

/** The run's work per account alias (null: the row named none), and the valid codes left out because their stored status is terminal. */
export async function countRunWorkByAccount(
  warehouse: Warehouse,
  runId: string,
  options: RunWorkOptions,
): Promise<{ byAccount: { accountAlias: string | null; work: number }[]; terminalSkipped: number }> {
  const byAccount = await warehouse.readAll(
    `SELECT account_alias, count(*) AS work FROM (${RUN_WORK}) GROUP BY ALL ORDER BY ALL`,
    {
      runId,
      refreshTerminal: options.refreshTerminal,
    },
  );
  const all = await warehouse.readAll(`SELECT count(*) AS work FROM (${RUN_WORK})`, { runId, refreshTerminal: true });
  const work = byAccount
    .getRowObjectsJS()
    .map((row) => ({ accountAlias: row.account_alias as string | null, work: countOf(row.work) }));
  const total = work.reduce((n, row) => n + row.work, 0);
  return { byAccount: work, terminalSkipped: countOf(all.getRowObjectsJS()[0]?.work) - total };
}

/** Forgets a run's staged rows (a plan stages the sources to count them, then leaves nothing behind). */
export async function deleteRunInputs(warehouse: Warehouse, runId: string): Promise<void> {
  await warehouse.transaction(async (sql) => {
    await recordChangedRows(
      sql,
      'run_inputs',
      'SELECT DISTINCT carrier, run_id FROM run_inputs WHERE run_id = $runId',
      {
        runId,
      },
    );
    await sql.run('DELETE FROM run_inputs WHERE run_id = $runId', { runId });
  });
}
