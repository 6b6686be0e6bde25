/** Per-table checksums of a warehouse, to compare two runs' results without their run ids and times. */
import { Warehouse } from '../../src/warehouse/warehouse.js';

/** The warehouse tables a run fills, without the columns that name the run or when it ran. */
export const COMPARED_TABLES: Record<string, string[]> = {
  orders: ['first_seen_at', 'last_seen_at', 'last_run_id'],
  order_charges: [],
  order_statuses: [],
  order_trackings: [],
  order_changes: ['seen_at', 'run_id'],
  delivery_failures: ['observed_at', 'run_id'],
  lookup_results: ['run_id', 'finished_at'],
  run_inputs: ['run_id'],
};
export const NORMALIZED_TABLES = [
  'orders',
  'order_charges',
  'order_statuses',
  'order_trackings',
  'order_changes',
  'delivery_failures',
];

/** Row count and an md5 over the sorted rows of each table, `excluded` columns left out. */
export async function tableChecksums(
  dbPath: string,
  tables: Record<string, string[]>,
): Promise<Record<string, { rows: number; md5: string }>> {
  const warehouse = await Warehouse.open(dbPath, { readOnly: true });
  try {
    const sums: Record<string, { rows: number; md5: string }> = {};
    for (const [table, excluded] of Object.entries(tables)) {
      const columns = excluded.length === 0 ? '*' : `* EXCLUDE (${excluded.join(', ')})`;
      const reader = await warehouse.connection.runAndReadAll(
        `SELECT count(*) AS n, md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR)), '')) AS sum FROM (SELECT ${columns} FROM ${table}) AS t`,
      );
      const row = reader.getRowObjectsJS()[0]!;
      sums[table] = { rows: Number(row.n), md5: row.sum as string };
    }
    return sums;
  } finally {
    await warehouse.close();
  }
}
