import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CHARGE_AUDIT_TABLE, refreshChargeAudit } from './charge-audit-rows.js';
import { isDuckDbFile } from './duckdb-file.js';
import { WAREHOUSE_MARKER_TABLE } from './migrations.js';
import { childTablesOf, PARTITION_CHANGES_TABLE, recordChangedRows } from './partition-change-ledger.js';
import { countOf } from './result-values.js';
import { PARTITIONED_TABLES } from './snapshot-partitions.js';
import { sqlText } from './sql-literals.js';
import type { SqlRunner, Warehouse } from './warehouse.js';
import { firstLineOf, WarehouseError } from './warehouse-errors.js';

/**
 * Tables whose row the newest copy wins, by its time: an order's snapshot (last seen), a price quote
 * (quoted), an order's image list (fetched). The rows that belong to it (an order's charges, statuses
 * and trackings; a quote's lines; a list's images) are replaced as a whole with it.
 */
const NEWEST_WINS = [
  {
    table: 'orders',
    key: ['carrier', 'order_code'],
    time: 'last_seen_at',
    parts: ['order_charges', 'order_statuses', 'order_trackings'],
  },
  { table: 'price_quotes', key: ['carrier', 'quote_id'], time: 'quoted_at', parts: ['price_quote_lines'] },
  { table: 'order_image_lists', key: ['carrier', 'order_code'], time: 'fetched_at', parts: ['order_images'] },
] as const;
/**
 * Tables a merge does not copy: the schema's own bookkeeping and marker, and the audit rows, which are computed
 * again from the merged rows of the file's orders.
 */
const NOT_MERGED = new Set(['schema_migrations', WAREHOUSE_MARKER_TABLE, CHARGE_AUDIT_TABLE, PARTITION_CHANGES_TABLE]);
const SOURCE = 'merge_source';

export interface MergedFile {
  readonly path: string;
  /** Rows each table gained or changed from this file. */
  readonly rows: Record<string, number>;
}

/** The base tables of a catalog, each with its primary key's columns (none when it has no key). */
async function baseTables(sql: SqlRunner, catalog: string): Promise<{ name: string; key: string[] }[]> {
  const reader = await sql.readAll(
    `SELECT t.table_name AS name,
            coalesce((SELECT any_value(c.constraint_column_names) FROM duckdb_constraints() c WHERE c.database_name = t.table_catalog AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY'), []) AS key
     FROM information_schema.tables t WHERE t.table_catalog = $catalog AND t.table_schema = 'main' AND t.table_type = 'BASE TABLE' ORDER BY 1`,
    { catalog },
  );
  return reader.getRowObjectsJS().map((row) => ({ name: row.name as string, key: row.key as string[] }));
}

async function schemaVersion(sql: SqlRunner, catalog: string): Promise<number> {
  const reader = await sql.readAll(`SELECT coalesce(max(version), 0) AS v FROM "${catalog}".main.schema_migrations`);
  return Number(reader.getRowObjectsJS()[0]?.v ?? 0);
}

/**
 * Merges workers' warehouse files into `target` with DuckDB's ATTACH (each file read-only), one
 * transaction per file, idempotently (merging a file again changes nothing). With `dryRun` it only
 * counts the rows each file would bring (the target may then be open read-only, let read the files):
 * - orders, price quotes, image lists: a file's row wins when it is newer (last_seen_at, quoted_at,
 *   fetched_at); the rows that belong to it (an order's charges, statuses and trackings; a quote's
 *   lines; a list's images) are replaced by the file's with it;
 * - quota_usage: the largest count per (carrier, carrier_day, key_alias): each worker wrote the shared counts it saw;
 * - every other table is a union: rows whose key is already there are kept as they are, tables
 *   without a key gain the rows they do not hold yet.
 */
export async function mergeWarehouses(
  target: Warehouse,
  files: readonly string[],
  dryRun = false,
): Promise<MergedFile[]> {
  const merged: MergedFile[] = [];
  const targetPath = resolve(target.path);
  const catalog = (await target.readAll('SELECT current_database() AS db')).getRowObjectsJS()[0]!.db as string;
  // Checked before any is merged: a file that is not a warehouse is a mistake in the command, not a half-done merge.
  for (const file of files)
    if (existsSync(file) && !(await isDuckDbFile(file)))
      throw new WarehouseError(`merge: ${file} is not a DuckDB database file`, undefined, 'WAREHOUSE_NOT_DUCKDB');
  for (const file of files) {
    if (resolve(file) === targetPath) throw new WarehouseError(`merge: ${file} is the target warehouse itself`);
    try {
      await target.run(`ATTACH ${sqlText(resolve(file))} AS ${SOURCE} (READ_ONLY)`);
    } catch (error) {
      throw new WarehouseError(`merge: cannot open ${file} read-only: ${firstLineOf(error)}`);
    }
    try {
      const merge = (sql: SqlRunner) => mergeOne(sql, catalog, file, dryRun);
      merged.push({ path: file, rows: await (dryRun ? target.exclusive(merge) : target.transaction(merge)) });
    } finally {
      await target.run(`DETACH ${SOURCE}`);
    }
  }
  return merged;
}

/** The files a read-only target must be let read to attach `file`. */
export function mergedFileAccess(file: string): string[] {
  return [resolve(file), `${resolve(file)}.wal`];
}

async function mergeOne(
  sql: SqlRunner,
  catalog: string,
  file: string,
  dryRun: boolean,
): Promise<Record<string, number>> {
  const marker = await sql.readAll(
    `SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = '${SOURCE}' AND schema_name = 'main' AND table_name = '${WAREHOUSE_MARKER_TABLE}'`,
  );
  if (Number(marker.getRowObjectsJS()[0]?.n ?? 0) === 0)
    throw new WarehouseError(
      `merge: ${file} is not a parcel-recon warehouse of this version (no ${WAREHOUSE_MARKER_TABLE} marker): run a command on it with this version first`,
      undefined,
      'WAREHOUSE_NOT_OURS',
    );
  const ours = await schemaVersion(sql, catalog);
  const theirs = await schemaVersion(sql, SOURCE);
  if (ours !== theirs)
    throw new WarehouseError(
      `merge: ${file} is at schema version ${theirs}, the target at ${ours}: run a command on both with this version first`,
    );
  const rows: Record<string, number> = {};
  const src = (table: string) => `${SOURCE}.main.${table}`;
  /** Inserts the rows `select` gives into `table` (`conflict`: its ON CONFLICT clause), or with dryRun counts them. */
  const insert = async (table: string, select: string, conflict = '', verb = 'INSERT') =>
    dryRun
      ? countOf((await sql.readAll(`SELECT count(*) AS n FROM (${select})`)).getRowObjectsJS()[0]?.n)
      : sql.run(`${verb} INTO ${table} ${select} ${conflict}`);
  /** Records in the ledger the partitions of the rows `select` gives of each of `tables` that is partitioned. */
  const recordRows = async (tables: readonly string[], select: (table: string) => string) => {
    if (dryRun) return;
    for (const table of tables) if (PARTITIONED_TABLES.has(table)) await recordChangedRows(sql, table, select(table));
  };

  for (const { table, key, time, parts } of NEWEST_WINS) {
    // The keys whose row in the file is newer than ours (or that we do not have).
    const columns = key.join(', ');
    await sql.run(
      `CREATE OR REPLACE TEMP TABLE merge_newer AS
       SELECT ${key.map((column) => `s.${column}`).join(', ')} FROM ${src(table)} s LEFT JOIN ${table} o USING (${columns})
       WHERE o.${key[1]} IS NULL OR s.${time} > o.${time}`,
    );
    const newer = `WHERE (${columns}) IN (SELECT (${columns}) FROM merge_newer)`;
    // The replaced rows' partitions, before and after; the rows placed by a replaced row's month move with it.
    const recordReplaced = () =>
      recordRows([...new Set([table, ...parts, ...childTablesOf(table)])], (part) => `SELECT * FROM ${part} ${newer}`);
    await recordReplaced();
    for (const part of parts) {
      if (!dryRun) await sql.run(`DELETE FROM ${part} ${newer}`);
      rows[part] = await insert(part, `SELECT * FROM ${src(part)} ${newer}`);
    }
    rows[table] = await insert(table, `SELECT * FROM ${src(table)} ${newer}`, '', 'INSERT OR REPLACE');
    await recordReplaced();
  }
  rows.quota_usage = await insert(
    'quota_usage',
    `SELECT * FROM ${src('quota_usage')} s
     WHERE NOT EXISTS (
       SELECT 1 FROM quota_usage q
       WHERE q.carrier = s.carrier AND q.carrier_day = s.carrier_day AND q.key_alias = s.key_alias AND q.lookups >= s.lookups
     )`,
    'ON CONFLICT (carrier, carrier_day, key_alias) DO UPDATE SET lookups = excluded.lookups, updated_at = excluded.updated_at',
  );
  await sql.run('DROP TABLE merge_newer');

  const theirTables = new Set((await baseTables(sql, SOURCE)).map((t) => t.name));
  for (const { name, key } of await baseTables(sql, catalog)) {
    if (NOT_MERGED.has(name) || name in rows || !theirTables.has(name)) continue;
    // The rows whose key is not there yet: what ON CONFLICT DO NOTHING would insert, so a dry run counts them.
    const keyTaken = key.map((column) => `t."${column}" = s."${column}"`).join(' AND ');
    rows[name] =
      key.length > 0
        ? await insert(
            name,
            `SELECT * FROM ${src(name)} s WHERE NOT EXISTS (SELECT 1 FROM ${name} t WHERE ${keyTaken})`,
            'ON CONFLICT DO NOTHING',
          )
        : await insert(name, `SELECT * FROM ${src(name)} EXCEPT SELECT * FROM ${name}`);
  }
  if (dryRun) return rows;
  // The file's rows where the target now places them, once every table is merged (a run's inputs are placed by its run).
  await recordRows(Object.keys(rows), (table) => `SELECT * FROM ${src(table)}`);
  // Every order the file holds rows of, whether or not they won: a superset of the orders whose audit inputs changed.
  await refreshChargeAudit(
    sql,
    `SELECT carrier, order_code FROM ${src('orders')}
     UNION ALL SELECT carrier, order_code FROM ${src('price_quotes')} WHERE order_code IS NOT NULL
     UNION ALL SELECT carrier, order_code FROM ${src('order_changes')}`,
  );
  return rows;
}
