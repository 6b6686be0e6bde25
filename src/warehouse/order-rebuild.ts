import { refreshChargeAudit } from './charge-audit-rows.js';
import { ofOrdersIn, sameOrder } from './order-keys.js';
import { childTablesOf, recordChangedRows } from './partition-change-ledger.js';
import { countOf } from './result-values.js';
import { HISTORY_TABLES } from './snapshot-spool-format.js';
import { sqlText } from './sql-literals.js';
import type { SqlRunner } from './warehouse.js';
import { firstLineOf, WarehouseError } from './warehouse-errors.js';

/**
 * The order rows a rebuild replaces, built beside the live ones in a rebuild warehouse (a separate
 * file the spooled snapshots were loaded into, each read answer also given a lookup_results row) and
 * swapped in for the orders whose every spooled answer was read.
 */
const REBUILT_BY_ORDER = ['orders', ...HISTORY_TABLES, 'order_changes'] as const;
const REBUILD_SOURCE = 'order_rebuild';
/** The orders the rebuild replaces, for the statements of one connection. */
const REBUILT_ORDERS = 'order_rebuild_codes';

/** What a rebuild replaces and what it keeps. */
export interface OrderRebuildPlan {
  /** Orders whose rows are replaced by the rebuilt ones (those new to the warehouse included). */
  readonly rebuilt: number;
  /** Stored orders of which no spooled answer was read (their spool was pruned, or is unreadable or missing): kept. */
  readonly keptWithoutAnswers: number;
  /** Stored orders of which some answers were read and some not: kept, as a rebuild from part of them would lose history. */
  readonly keptPartlyRead: number;
}

/**
 * Attaches the rebuild warehouse read-only, runs `work` with it as `order_rebuild`, then detaches it.
 * The rebuild warehouse must be closed by its own connection first.
 */
export async function withRebuildSource<T>(sql: SqlRunner, path: string, work: () => Promise<T>): Promise<T> {
  try {
    await sql.run(`ATTACH ${sqlText(path)} AS ${REBUILD_SOURCE} (READ_ONLY)`);
  } catch (error) {
    throw new WarehouseError(`cannot open the rebuilt rows in ${path}: ${firstLineOf(error)}`, { cause: error });
  }
  try {
    return await work();
  } finally {
    await sql.run(`DETACH ${REBUILD_SOURCE}`);
  }
}

const source = (table: string) => `${REBUILD_SOURCE}.main.${table}`;

/**
 * Marks the orders the rebuild may replace and counts the rest. An order is rebuilt when it is new
 * to the warehouse, or when the rebuilt rows come from every answer the warehouse holds of it: its
 * first and last sightings were read (first_seen_at, last_seen_at), and so was the answer of every
 * run that recorded a lookup or a change of it. Any other stored order keeps its rows.
 */
export async function planOrderRebuild(sql: SqlRunner): Promise<OrderRebuildPlan> {
  const answerRead = (alias: string) =>
    `EXISTS (SELECT 1 FROM ${source('lookup_results')} AS a WHERE ${sameOrder('a', alias)} AND a.run_id = ${alias}.run_id)`;
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${REBUILT_ORDERS} AS
     SELECT r.carrier, r.order_code FROM ${source('orders')} AS r LEFT JOIN orders AS o ON ${sameOrder('o', 'r')}
     WHERE o.order_code IS NULL
        OR (o.first_seen_at >= r.first_seen_at AND o.last_seen_at <= r.last_seen_at
            AND NOT EXISTS (SELECT 1 FROM lookup_results AS l WHERE ${sameOrder('l', 'r')} AND l.outcome = 'ok' AND NOT ${answerRead('l')})
            AND NOT EXISTS (SELECT 1 FROM order_changes AS c WHERE ${sameOrder('c', 'r')} AND NOT ${answerRead('c')}))`,
  );
  const orderKey = '(carrier, order_code)';
  const reader = await sql.readAll(
    `SELECT (SELECT count(*) FROM ${REBUILT_ORDERS}) AS rebuilt,
            (SELECT count(*) FROM orders WHERE ${orderKey} NOT IN (SELECT ${orderKey} FROM ${source('orders')})) AS without_answers,
            (SELECT count(*) FROM orders WHERE ${orderKey} IN (SELECT ${orderKey} FROM ${source('orders')})
               AND ${orderKey} NOT IN (SELECT ${orderKey} FROM ${REBUILT_ORDERS})) AS partly_read`,
  );
  const row = reader.getRowObjectsJS()[0];
  return {
    rebuilt: countOf(row?.rebuilt),
    keptWithoutAnswers: countOf(row?.without_answers),
    keptPartlyRead: countOf(row?.partly_read),
  };
}

/**
 * Replaces the planned orders' rows (the order, its history rows, its changes and the failed
 * attempts tracking recorded) with the rebuilt ones, and recomputes their audit rows. The caller
 * runs it in the transaction that planned them, so the swap is whole or not at all.
 */
export async function swapRebuiltOrders(sql: SqlRunner): Promise<void> {
  const planned = ofOrdersIn(REBUILT_ORDERS);
  // The rows replaced and the rows placed by their order's month, which a rebuilt first sighting moves: before and after.
  const recordReplaced = async () => {
    for (const table of new Set([...REBUILT_BY_ORDER, 'delivery_failures', ...childTablesOf('orders')]))
      await recordChangedRows(sql, table, `SELECT * FROM ${table} WHERE ${planned}`);
  };
  await recordReplaced();
  for (const table of REBUILT_BY_ORDER) {
    await sql.run(`DELETE FROM ${table} WHERE ${planned}`);
    await sql.run(`INSERT INTO ${table} BY NAME SELECT * FROM ${source(table)} WHERE ${planned}`);
  }
  await sql.run(`DELETE FROM delivery_failures WHERE source = 'tracking' AND ${planned}`);
  // A callback's row of the same attempt stays, as when tracking sees an attempt a callback reported first.
  await sql.run(
    `INSERT INTO delivery_failures BY NAME SELECT * FROM ${source('delivery_failures')} WHERE ${planned} ON CONFLICT DO NOTHING`,
  );
  await refreshChargeAudit(sql, `SELECT carrier, order_code FROM ${REBUILT_ORDERS}`);
  await recordReplaced();
  await sql.run(`DROP TABLE ${REBUILT_ORDERS}`);
}

/** Drops what planOrderRebuild marked, when nothing is to be swapped (a dry run). */
export async function discardOrderRebuildPlan(sql: SqlRunner): Promise<void> {
  await sql.run(`DROP TABLE ${REBUILT_ORDERS}`);
}
