import type { CarrierInstant } from '../carriers/carrier-time.js';
import { DEFAULT_CARRIER_ID, findCarrier } from '../carriers/known-carriers.js';
import type { SnapshotMapping } from '../carriers/snapshot-mapping.js';
import { CHARGE_AUDIT_TABLE, refreshChargeAuditOf } from './charge-audit-rows.js';
import { type SpoolFile, spoolFileRows, spoolReaderFor, withNdjsonSpool } from './ndjson-spool.js';
import { recordDeliveryFailures, recordOrderChanges } from './order-history-recorder.js';
import { ofOrdersIn, sameOrder } from './order-keys.js';
import { type ChangedRows, childTablesOf, recordChangedRowsOf } from './partition-change-ledger.js';
import { countOf } from './result-values.js';
import {
  HISTORY_TABLES,
  historyRowsSelect,
  readSnapshotSpool,
  type SnapshotSpoolFile,
  type SpooledSnapshot,
  STAGED_HISTORY_LISTS,
  STAGED_ORDER_DATE,
} from './snapshot-spool-format.js';
import { sqlText } from './sql-literals.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

export { type SpooledAnswer, type SpooledSnapshot, spooledSnapshot } from './snapshot-spool-format.js';

export const LOOKUP_OUTCOMES = ['ok', 'carrier_error', 'transport_error', 'rejected', 'deferred'] as const;
export type LookupOutcome = (typeof LOOKUP_OUTCOMES)[number];

/** How one order's lookup ended in a run (one lookup_results row). */
export interface LookupResultRow {
  readonly runId: string;
  readonly orderCode: string;
  readonly accountAlias: string | null;
  readonly outcome: LookupOutcome;
  /** The carrier's errorCode, or the transport failure's code. */
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  readonly attempts: number;
  /** The source row the code came from. */
  readonly origin: string | null;
  readonly finishedAt: CarrierInstant;
}

/** What one checkpoint of a run commits: the snapshots fetched and every lookup's outcome. */
export interface LookupBatch {
  readonly snapshots: readonly SpooledSnapshot[];
  readonly results: readonly LookupResultRow[];
  /** The carrier of the batch's orders (a run looks up one carrier's); the default carrier when absent. */
  readonly carrier?: string;
}

/** The history tables whose rows are placed by a time of their own, not by their order's month. */
const OWN_TIME_HISTORY = HISTORY_TABLES.filter((table) => !childTablesOf('orders').includes(table));

/** The temporary table a batch's snapshots are staged in, for storeStagedSnapshots. */
export const STAGED_SNAPSHOTS = 'staged_snapshots';
const STAGED = STAGED_SNAPSHOTS;
/** The stored rows of the staged snapshots' orders, as they were before the batch. */
const STORED = 'stored_of_batch';

/**
 * Loads a batch in one transaction: each snapshot becomes the order's row in `orders` and replaces its
 * charge, status and tracking rows; each result row is inserted or replaced in `lookup_results`.
 * The snapshots go through an NDJSON spool file in `spoolDir`, read by one statement. Their bodies
 * are as the contract read them (answerBodyAsRead: a key given twice holds its last value).
 *
 * Idempotent: loading a batch again leaves the same rows. A snapshot older than the one stored for
 * its order (last_seen_at) is skipped, so a late batch never rolls an order back; of two snapshots of
 * one order in a batch the later (seenAt, then position) wins, as does the later of two results of
 * one run and order. first_seen_at keeps the first sighting.
 */
export async function loadLookupBatch(warehouse: Warehouse, batch: LookupBatch, spoolDir: string): Promise<void> {
  const snapshots = latestOfEachOrder(batch.snapshots);
  if (snapshots.length === 0 && batch.results.length === 0) return;
  await withNdjsonSpool(spoolDir, 'lookup-batch', async (spool) => {
    const snapshotFiles = snapshots.length === 0 ? [] : [await spool.write(snapshots.map(lineOf))];
    await loadLookupFiles(warehouse, { snapshotFiles, results: batch.results, carrier: batch.carrier }, spoolDir);
  });
}

/**
 * A batch whose snapshots were written to spool files as they came (answerSpoolLine lines, at most
 * one snapshot per order in all of them: a run looks each order up once), and its results.
 */
export interface LookupFilesBatch {
  readonly snapshotFiles: readonly SnapshotSpoolFile[];
  readonly results: readonly LookupResultRow[];
  /**
   * The caller knows that the warehouse held none of the snapshots' orders before: the lookup of
   * stored ones is skipped.
   */
  readonly newOrdersOnly?: boolean;
  /** The carrier of the batch's orders; the default carrier when absent. */
  readonly carrier?: string | undefined;
}

/** loadLookupBatch for snapshots already in spool files; the files are left where they are. */
export async function loadLookupFiles(warehouse: Warehouse, batch: LookupFilesBatch, spoolDir: string): Promise<void> {
  const results = latestOfEachRunAndOrder(batch.results);
  if (batch.snapshotFiles.length === 0 && results.length === 0) return;
  const carrier = batch.carrier ?? DEFAULT_CARRIER_ID;
  await withNdjsonSpool(spoolDir, 'lookup-results', async (spool) => {
    const resultsFile = results.length === 0 ? undefined : await spool.write(results.map(resultSpoolLine));
    await warehouse.loadTransaction(
      async (sql) => {
        const resultsChanged: ChangedRows[] = [];
        if (resultsFile !== undefined) {
          await insertResults(sql, resultsFile, carrier);
          resultsChanged.push(changedResults(resultsFile, carrier));
        }
        if (batch.snapshotFiles.length > 0) {
          await stageSnapshots(sql, batch.snapshotFiles, carrier);
          await storeStagedSnapshots(sql, batch.newOrdersOnly ?? false, resultsChanged);
        } else await recordChangedRowsOf(sql, resultsChanged);
      },
      `a batch of ${results.length} lookups`,
      ['batchSize', 'memoryLimit'],
    );
  });
}

/** Of several snapshots of an order, the one seen last; on a tie, the later in the batch. */
function latestOfEachOrder(snapshots: readonly SpooledSnapshot[]): SpooledSnapshot[] {
  const latest = new Map<string, SpooledSnapshot>();
  for (const spooled of snapshots) {
    const kept = latest.get(spooled.orderCode);
    // Contract instants are fixed-width UTC text: they compare as text.
    if (kept === undefined || spooled.seenAt >= kept.seenAt) latest.set(spooled.orderCode, spooled);
  }
  return [...latest.values()];
}

const lineOf = (spooled: SpooledSnapshot) => spooled.line;

function latestOfEachRunAndOrder(results: readonly LookupResultRow[]): LookupResultRow[] {
  return [...new Map(results.map((row) => [`${row.runId}\u0000${row.orderCode}`, row])).values()];
}

/**
 * The staged snapshots' rows, of `carrier`'s orders, from a relation of spool rows (one column per
 * answer field beside runId, accountAlias and seenAt).
 */
export function stagedSnapshotsSelect(spoolRows: string, carrier: string): string {
  return `SELECT ${sqlText(carrier)} AS carrier, *, ${STAGED_ORDER_DATE} AS order_date FROM (SELECT ${snapshotMappingOf(carrier).stagedColumns} FROM ${spoolRows} AS s)`;
}

function snapshotMappingOf(carrier: string): SnapshotMapping {
  const known = findCarrier(carrier);
  if (known === undefined) throw new RangeError(`no carrier ${carrier}`);
  return known.snapshotMapping;
}

/** Fills the temporary staging table from the spool files. */
async function stageSnapshots(sql: SqlRunner, files: readonly SnapshotSpoolFile[], carrier: string): Promise<void> {
  const limit = await sql.readAll(`SELECT current_setting('memory_limit') AS memory_limit`);
  const reader = spoolReaderFor(String(limit.getRowObjectsJS()[0]?.memory_limit));
  const stagedSelect = (file: SnapshotSpoolFile) =>
    stagedSnapshotsSelect(readSnapshotSpool('$file', file, snapshotMappingOf(carrier), reader), carrier);
  const [first, ...later] = files;
  await sql.run(`CREATE OR REPLACE TEMP TABLE ${STAGED} AS ${stagedSelect(first!)}`, { file: first!.path });
  for (const file of later) await sql.run(`INSERT INTO ${STAGED} ${stagedSelect(file)}`, { file: file.path });
}

/**
 * Drops stale staged snapshots; logs what the rest change against the stored orders and the failed
 * attempts they show; then replaces the history rows and upserts the orders. The ledger records the
 * partitions of the rows replaced before they go, and of all the batch wrote, with `alsoChanged` (rows
 * the caller wrote in the transaction), in one statement at the end. Orders seen for the
 * first time have no stored row to be stale against or to differ from, and no history rows to
 * replace (history rows are only ever written with their order's row): a batch of only such orders
 * skips those statements, and the lookup that finds them when the caller already knows.
 *
 * A batch's cost must not grow with the orders kept before it, so every statement reaches the stored
 * rows as `order_code IN (SELECT order_code FROM staged)` (ofOrdersIn): DuckDB builds its hash table from the
 * batch and filters the stored table's scan by the batch's codes, skipping the row groups whose range
 * of codes holds none of them. A join or EXISTS on the stored table would build from all its rows.
 * The stored orders' rows are read once, into a small table the later statements join. (An index
 * lookup per code fetches each row on its own, which DuckDB does far slower than a filtered scan.)
 */
export async function storeStagedSnapshots(
  sql: SqlRunner,
  newOrdersOnly: boolean,
  alsoChanged: readonly ChangedRows[] = [],
): Promise<void> {
  const anyStored = !newOrdersOnly && (await stageStoredOrders(sql)) > 0;
  const ofStagedOrders = ofOrdersIn(STAGED);
  if (anyStored) {
    await sql.run(
      `DELETE FROM ${STAGED} AS s
       WHERE EXISTS (SELECT 1 FROM ${STORED} AS stored
                    WHERE ${sameOrder('stored', 's')} AND stored.last_seen_at > s.last_seen_at)`,
    );
    await recordOrderChanges(sql, STAGED, STORED);
  }
  await recordDeliveryFailures(sql, STAGED);
  // The partitions of the history rows the batch is about to replace. Charges and audit rows are in
  // their orders' partitions, which the statement at the end records.
  if (anyStored)
    await recordChangedRowsOf(
      sql,
      OWN_TIME_HISTORY.map((table) => ({ table, rows: `SELECT * FROM ${table} WHERE ${ofStagedOrders}` })),
    );
  for (const table of HISTORY_TABLES) {
    if (anyStored) await sql.run(`DELETE FROM ${table} WHERE ${ofStagedOrders}`);
    await sql.run(`INSERT INTO ${table} ${historyRowsSelect(table, STAGED)}`);
  }
  // The staged orders with their first sighting, and a date: one without a date of its own is dated by it.
  const firstSeenAt = anyStored ? 'coalesce(stored.first_seen_at, s.last_seen_at)' : 's.last_seen_at';
  const dated = `(
    SELECT s.* REPLACE (coalesce(s.order_date, ${firstSeenAt}) AS order_date), ${firstSeenAt} AS first_seen_at
    FROM ${STAGED} AS s ${anyStored ? `LEFT JOIN ${STORED} AS stored ON ${sameOrder('stored', 's')}` : ''})`;
  // Replacing checks each row for a stored one: only when some are there.
  await sql.run(
    `${anyStored ? 'INSERT OR REPLACE' : 'INSERT'} INTO orders BY NAME
     SELECT d.* EXCLUDE (${STAGED_HISTORY_LISTS.join(', ')}), coalesce(status_code.is_terminal, false) AS is_terminal
     FROM ${dated} AS d
     LEFT JOIN status_codes AS status_code ON status_code.carrier = d.carrier AND status_code.code = d.status`,
  );
  // Recorded once the orders are stored: the rows placed by their order's month find it. Failures
  // are only ever added or updated in place, and a change is seen when its snapshot was.
  await recordChangedRowsOf(sql, [
    { table: 'orders', rows: `SELECT * FROM ${dated} AS d`, children: ['order_charges', CHARGE_AUDIT_TABLE] },
    ...OWN_TIME_HISTORY.map((table) => ({ table, rows: historyRowsSelect(table, STAGED) })),
    { table: 'delivery_failures', rows: `SELECT * FROM delivery_failures WHERE ${ofStagedOrders}` },
    ...(anyStored ? [{ table: 'order_changes', rows: `SELECT carrier, last_seen_at AS seen_at FROM ${STAGED}` }] : []),
    ...alsoChanged,
  ]);
  // The staged snapshots are one per order (latestOfEachOrder): the orders' rows just stored, and their
  // lists the history rows.
  await refreshChargeAuditOf(sql, STAGED, anyStored, {
    charges: `(${historyRowsSelect('order_charges', STAGED)})`,
    statuses: `(${historyRowsSelect('order_statuses', STAGED)})`,
    orders: dated,
  });
  // Dropped at once: kept until the next batch, a batch's staged rows would hold DuckDB memory for nothing.
  await sql.run(`DROP TABLE ${STAGED}`);
  if (!newOrdersOnly) await sql.run(`DROP TABLE ${STORED}`);
}

/** Copies the stored rows of the staged snapshots' orders into a temporary table; returns how many there are. */
async function stageStoredOrders(sql: SqlRunner): Promise<number> {
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${STORED} AS
     SELECT * FROM orders WHERE ${ofOrdersIn(STAGED)}`,
  );
  const stored = await sql.readAll(`SELECT count(*) AS stored FROM ${STORED}`);
  return countOf(stored.getRowObjectsJS()[0]?.stored);
}

/** The spool line of one lookup_results row. */
export function resultSpoolLine(row: LookupResultRow): string {
  return JSON.stringify({
    runId: row.runId,
    orderCode: row.orderCode,
    accountAlias: row.accountAlias,
    outcome: row.outcome,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    attempts: row.attempts,
    origin: row.origin,
    finishedAt: row.finishedAt,
  });
}

const RESULT_FIELDS = {
  runId: 'VARCHAR',
  orderCode: 'VARCHAR',
  accountAlias: 'VARCHAR',
  outcome: 'VARCHAR',
  errorCode: 'VARCHAR',
  errorMessage: 'VARCHAR',
  attempts: 'INTEGER',
  origin: 'VARCHAR',
  finishedAt: 'TIMESTAMPTZ',
} as const;

/** Inserts (or replaces) the lookup_results rows, of `carrier`'s orders, of a spool file written with resultSpoolLine. */
export async function loadResults(sql: SqlRunner, file: SpoolFile, carrier: string): Promise<void> {
  await insertResults(sql, file, carrier);
  await recordChangedRowsOf(sql, [changedResults(file, carrier)]);
}

/** loadResults without recording the partitions it changed (changedResults), for a statement of the ledger that records more. */
async function insertResults(sql: SqlRunner, file: SpoolFile, carrier: string): Promise<void> {
  await sql.run(
    `INSERT OR REPLACE INTO lookup_results
     SELECT ${sqlText(carrier)}, runId, orderCode, accountAlias, outcome, errorCode, errorMessage, attempts, origin, finishedAt
     FROM ${spoolFileRows(sqlText(file.path), file, RESULT_FIELDS)}`,
  );
}

/**
 * The lookup_results rows insertResults wrote, for the ledger. A replaced row keeps its run and order,
 * and its month: the lookup of a run is not made again.
 */
function changedResults(file: SpoolFile, carrier: string): ChangedRows {
  return {
    table: 'lookup_results',
    rows: `SELECT ${sqlText(carrier)} AS carrier, finishedAt AS finished_at FROM ${spoolFileRows(sqlText(file.path), file, RESULT_FIELDS)}`,
  };
}
