import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBConnection } from '@duckdb/node-api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadLookupBatch } from '../../src/warehouse/snapshot-loader.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';
import { loaded, okLookupResult, rowsOf, snapshotOf, trackingWire, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

afterEach(() => {
  vi.restoreAllMocks();
});

const STORED_ORDERS = 400_000;
/** DuckDB's row group: the unit whose range of codes a filtered scan checks before reading it. */
const ROW_GROUP_ROWS = 122_880;
const SEEN = '2026-12-20T01:00:00.000000Z';

interface ProfileNode {
  readonly operator_type?: string;
  readonly operator_rows_scanned?: number;
  readonly extra_info?: { readonly Table?: string };
  readonly children?: readonly ProfileNode[];
}

/** Rows the profiled statement read from the `orders` table, over all its scans of it. */
function ordersRowsScanned(node: ProfileNode): number {
  const own =
    node.operator_type === 'TABLE_SCAN' && /(^|\.)orders$/.test(node.extra_info?.Table ?? '')
      ? (node.operator_rows_scanned ?? 0)
      : 0;
  return own + (node.children ?? []).reduce((sum, child) => sum + ordersRowsScanned(child), 0);
}

/** Records, after each statement the warehouse runs, how many rows of `orders` DuckDB's profile says it read. */
async function profileOrdersReads(
  warehouse: Warehouse,
  profile: string,
): Promise<{ statement: string; rows: number }[]> {
  await warehouse.run("SET enable_profiling = 'json'");
  await warehouse.run(`SET profiling_output = '${profile}'`);
  const reads: { statement: string; rows: number }[] = [];
  const record = async (statement: string) => {
    const text = await readFile(profile, 'utf8').catch(() => '');
    if (text !== '') reads.push({ statement: statement.slice(0, 80), rows: ordersRowsScanned(JSON.parse(text)) });
  };
  const run = DuckDBConnection.prototype.run;
  vi.spyOn(DuckDBConnection.prototype, 'run').mockImplementation(async function (this: DuckDBConnection, ...args) {
    const result = await run.apply(this, args);
    await record(args[0]);
    return result;
  });
  const runAndReadAll = DuckDBConnection.prototype.runAndReadAll;
  vi.spyOn(DuckDBConnection.prototype, 'runAndReadAll').mockImplementation(async function (
    this: DuckDBConnection,
    ...args
  ) {
    const result = await runAndReadAll.apply(this, args);
    await record(args[0]);
    return result;
  });
  return reads;
}

describe('a batch of lookups in a warehouse that holds many orders', () => {
  it("reads only the batch's own orders from the orders table", async () => {
    const { warehouse, dir } = await temp.open();
    await warehouse.run(
      `INSERT INTO orders (carrier, order_code, account_alias, status, is_terminal, order_date, first_seen_at, last_seen_at, last_run_id)
       SELECT '247express', 'EX' || lpad(CAST(i AS VARCHAR), 9, '0'), 'shop-a', '30', false, TIMESTAMPTZ '2026-11-01 00:00:00+00', TIMESTAMPTZ '2026-11-01 00:00:00+00', TIMESTAMPTZ '2026-11-02 00:00:00+00', 'run-0'
       FROM range(1, ${STORED_ORDERS + 1}) AS t(i) ORDER BY i`,
    );
    // The latest orders looked up again and new ones after them, as a night re-tracks recent orders.
    const code = (i: number) => `EX${String(i).padStart(9, '0')}`;
    const stored = Array.from({ length: 10 }, (_, i) => code(STORED_ORDERS - i));
    const fresh = Array.from({ length: 10 }, (_, i) => code(STORED_ORDERS + 1 + i));
    const codes = [...stored, ...fresh];
    const reads = await profileOrdersReads(warehouse, join(dir, 'profile.json'));
    await loadLookupBatch(
      warehouse,
      {
        snapshots: codes.map((code) => loaded(snapshotOf(trackingWire(code)), SEEN)),
        results: codes.map((code) => okLookupResult(code, SEEN)),
      },
      join(dir, 'spool'),
    );
    vi.restoreAllMocks();
    await warehouse.run("SET enable_profiling = 'no_output'");

    expect(reads.length).toBeGreaterThan(0);
    const widest = reads.reduce((max, read) => (read.rows > max.rows ? read : max));
    expect(widest.rows, widest.statement).toBeLessThanOrEqual(ROW_GROUP_ROWS);
    const [count] = await rowsOf(
      warehouse,
      `SELECT count(*) AS orders, count(*) FILTER (WHERE last_seen_at = '${SEEN}') AS seen FROM orders`,
    );
    expect(count).toEqual({ orders: String(STORED_ORDERS + fresh.length), seen: String(codes.length) });
  });
});
