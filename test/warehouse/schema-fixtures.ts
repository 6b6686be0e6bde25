import { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { CHARGE_AUDIT_TABLE, chargeAuditQuery } from '../../src/warehouse/charge-audit-rows.js';
import { MIGRATIONS, WAREHOUSE_MARKER_TABLE } from '../../src/warehouse/migrations.js';
import { type SqlRunner, Warehouse } from '../../src/warehouse/warehouse.js';

/** The columns of the orders schema version 8 added. */
const CARRIER_COD_FACT_COLUMNS = ['cod_collected', 'cod_collected_at', 'cod_transferred', 'cod_transferred_at'];

/** Takes an open warehouse back to schema version 7: no ledger of snapshot partition changes, its orders without the carriers' COD facts. */
async function toSchemaVersionSeven(warehouse: SqlRunner): Promise<void> {
  await warehouse.run('DROP TABLE snapshot_partition_changes');
  for (const column of CARRIER_COD_FACT_COLUMNS) await warehouse.run(`ALTER TABLE orders DROP COLUMN ${column}`);
  await warehouse.run('DELETE FROM schema_migrations WHERE version > 7');
}

/** Takes the warehouse at `path` back to schema version 7 (see toSchemaVersionSeven). */
export async function backToSchemaVersionSeven(path: string): Promise<void> {
  const warehouse = await Warehouse.open(path);
  try {
    await toSchemaVersionSeven(warehouse);
  } finally {
    await warehouse.close();
  }
}

/** The CREATE statements of the tables and views of schema version 4, from a database in memory. */
async function schemaFourCatalog(): Promise<{ tables: Map<string, string>; views: string[] }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const migration of MIGRATIONS.filter((m) => m.version <= 4)) await connection.run(migration.sql);
    const tables = (await connection.runAndReadAll('SELECT table_name, sql FROM duckdb_tables()')).getRowObjectsJS();
    const views = (
      await connection.runAndReadAll('SELECT sql FROM duckdb_views() WHERE NOT internal')
    ).getRowObjectsJS();
    return {
      tables: new Map(tables.map((row) => [String(row.table_name), String(row.sql)])),
      views: views.map((row) => String(row.sql).replace(/^CREATE VIEW/, 'CREATE OR REPLACE VIEW')),
    };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Takes an open warehouse back to schema version 4, as the release before carriers wrote it: every
 * table of order rows, the quota ledger and the reference tables without `carrier` (and their keys of
 * that version), no neutral statuses table, no findings' marks or deposits, the views of version 1, no
 * schema_migrations row after 4.
 */
async function toSchemaVersionFour(warehouse: SqlRunner): Promise<void> {
  await toSchemaVersionSeven(warehouse);
  const { tables, views } = await schemaFourCatalog();
  const columns = (
    await warehouse.readAll(
      'SELECT table_name, list(column_name) AS columns FROM duckdb_columns() WHERE database_name = current_database() GROUP BY ALL',
    )
  ).getRowObjectsJS();
  for (const row of columns) {
    const table = String(row.table_name);
    const created = tables.get(table);
    if (created === undefined || !(row.columns as string[]).includes('carrier') || created.includes('carrier VARCHAR'))
      continue;
    const dropped = (row.columns as string[]).includes('neutral_status') ? 'carrier, neutral_status' : 'carrier';
    await warehouse.run(created.replace(`CREATE TABLE ${table}(`, `CREATE TABLE ${table}_v4(`));
    // That release knew 247Express alone: other carriers' reference rows were not there.
    await warehouse.run(
      `INSERT INTO ${table}_v4 BY NAME SELECT * EXCLUDE (${dropped}) FROM ${table} WHERE carrier = '${DEFAULT_CARRIER_ID}'`,
    );
    await warehouse.run(`DROP TABLE ${table}`);
    await warehouse.run(`ALTER TABLE ${table}_v4 RENAME TO ${table}`);
  }
  await warehouse.run('DROP TABLE neutral_statuses');
  for (const table of [...BANK_DEPOSIT_TABLES, ...FINDING_MARK_TABLES]) await warehouse.run(`DROP TABLE ${table}`);
  for (const view of views) await warehouse.run(view);
  await warehouse.run('DELETE FROM schema_migrations WHERE version > 4');
}

/** Takes the warehouse at `path` back to schema version 4 (see toSchemaVersionFour). */
export async function backToSchemaVersionFour(path: string): Promise<void> {
  const warehouse = await Warehouse.open(path);
  try {
    await toSchemaVersionFour(warehouse);
  } finally {
    await warehouse.close();
  }
}

/** The column schema version 3 added to the orders and their audit rows, as DuckDB writes it in a table's SQL. */
const ORDER_DATE_COLUMN = 'order_date TIMESTAMP WITH TIME ZONE NOT NULL, ';

/** The tables schema version 4 added. */
const PAYOUT_TABLES = ['payout_lines', 'payout_line_fees', 'payout_line_history', 'payout_imports'];

/** The tables schema version 6 added. */
const FINDING_MARK_TABLES = ['cod_finding_marks', 'cod_finding_mark_history'];

/** The table schema version 7 added. */
const BANK_DEPOSIT_TABLES = ['bank_deposits'];

/** Takes an open warehouse back to schema version 3: without the payout statements' tables. */
async function toSchemaVersionThree(warehouse: SqlRunner): Promise<void> {
  await toSchemaVersionFour(warehouse);
  for (const table of PAYOUT_TABLES) await warehouse.run(`DROP TABLE ${table}`);
  await warehouse.run('DELETE FROM schema_migrations WHERE version > 3');
}

/**
 * Takes an open warehouse back to schema version 2, as the release before the marker wrote it: its
 * orders and audit rows without their order date (the same tables otherwise, keys included), no
 * marker, and no schema_migrations row after 2.
 */
async function toSchemaVersionTwo(warehouse: SqlRunner): Promise<void> {
  await toSchemaVersionThree(warehouse);
  for (const table of ['orders', CHARGE_AUDIT_TABLE]) {
    const [created] = (
      await warehouse.readAll(
        `SELECT sql FROM duckdb_tables() WHERE database_name = current_database() AND table_name = '${table}'`,
      )
    ).getRowObjectsJS();
    const sql = String(created?.sql);
    if (!sql.includes(ORDER_DATE_COLUMN)) throw new Error(`${table} has no order_date column: ${sql}`);
    await warehouse.run(
      sql.replace(`CREATE TABLE ${table}(`, `CREATE TABLE ${table}_v2(`).replace(ORDER_DATE_COLUMN, ''),
    );
    await warehouse.run(
      `INSERT INTO ${table}_v2 BY NAME SELECT * EXCLUDE (order_date) FROM ${table} ORDER BY order_code`,
    );
    await warehouse.run(`DROP TABLE ${table}`);
    await warehouse.run(`ALTER TABLE ${table}_v2 RENAME TO ${table}`);
  }
  await warehouse.run(`DROP TABLE ${WAREHOUSE_MARKER_TABLE}`);
  await warehouse.run('DELETE FROM schema_migrations WHERE version > 2');
}

/** Takes the warehouse at `path` back to schema version 2 (see toSchemaVersionTwo). */
export async function backToSchemaVersionTwo(path: string): Promise<void> {
  const warehouse = await Warehouse.open(path);
  try {
    await toSchemaVersionTwo(warehouse);
  } finally {
    await warehouse.close();
  }
}

/** The audit rows' columns at schema version 1. */
const V1_AUDIT_COLUMNS = [
  'order_code',
  'price_info',
  'lines_total',
  'far_region_line_cost',
  'returned_in_history',
  'cancelled_in_history',
  'delivered_at',
  'quote_id',
  'quote_total',
  'total_at_delivery',
  'total_changed_at',
];

/**
 * Takes the warehouse at `path` back to schema version 1, as a file written by the first release
 * holds it: its audit table of that version, with the rows its writers stored (but for the order
 * `withoutAuditRowOf`, when given).
 */
export async function backToSchemaVersionOne(path: string, withoutAuditRowOf?: string): Promise<void> {
  const warehouse = await Warehouse.open(path);
  try {
    await warehouse.run(
      `CREATE TABLE audit_v1 AS SELECT ${V1_AUDIT_COLUMNS.join(', ')} FROM (${chargeAuditQuery()}) ORDER BY order_code`,
    );
    await toSchemaVersionTwo(warehouse);
    await warehouse.run(`DROP TABLE ${CHARGE_AUDIT_TABLE}`);
    await warehouse.run(`ALTER TABLE audit_v1 RENAME TO ${CHARGE_AUDIT_TABLE}`);
    if (withoutAuditRowOf !== undefined)
      await warehouse.run(`DELETE FROM ${CHARGE_AUDIT_TABLE} WHERE order_code = $code`, { code: withoutAuditRowOf });
    await warehouse.run('DELETE FROM schema_migrations WHERE version > 1');
  } finally {
    await warehouse.close();
  }
}
