import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBInstance } from './duckdb-library.js';
import type { Migration } from './schema/migration.js';
import { MIGRATIONS } from './schema/schema-versions.js';
import { MARK_EVERY_PARTITION_CHANGED, PARTITION_CHANGES_VERSION } from './schema/v9-snapshot-partition-changes.js';
import { firstLineOf, WarehouseError } from './warehouse-errors.js';

export type { Migration };
export { MIGRATIONS };

/** The schema version this program writes: its newest migration's. */
export const SCHEMA_VERSION = Math.max(0, ...MIGRATIONS.map((m) => m.version));

const CREATE_MIGRATIONS_TABLE = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
  )`;

/** The table whose row marks a DuckDB file as this program's warehouse (schema version 3 on). */
export const WAREHOUSE_MARKER_TABLE = 'parcel_recon_warehouse';

/** The schema version that brought the marker: a warehouse at an earlier one was written without it. */
const MARKED_FROM_VERSION = 3;

/** What a DuckDB file is to this program, read before anything is written to it. */
type FileKind =
  /** Holds no table or view: a new warehouse is made in it. */
  | { readonly kind: 'empty' }
  /** A warehouse, at `version` (one written before the marker, recognized by its catalog, is one too). */
  | { readonly kind: 'warehouse'; readonly version: number }
  /** Holds tables of something else. */
  | { readonly kind: 'foreign' };

const IN_MAIN = "database_name = current_database() AND schema_name = 'main'";

async function rowsOf(connection: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJS();
}

async function hasTable(connection: DuckDBConnection, table: string): Promise<boolean> {
  const [found] = await rowsOf(
    connection,
    `SELECT count(*) AS n FROM duckdb_tables() WHERE ${IN_MAIN} AND table_name = '${table}'`,
  );
  return Number(found?.n ?? 0) > 0;
}

/** The newest schema version in the file's schema_migrations; 0 when it has none. */
async function appliedVersion(connection: DuckDBConnection): Promise<number> {
  if (!(await hasTable(connection, 'schema_migrations'))) return 0;
  const [newest] = await rowsOf(connection, 'SELECT max(version) AS v FROM schema_migrations');
  return Number(newest?.v ?? 0);
}

/** Each table's columns (`name type` in order), of the main schema of the connection's database. */
async function tableColumns(connection: DuckDBConnection): Promise<Map<string, string>> {
  const rows = await rowsOf(
    connection,
    `SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) AS columns
     FROM duckdb_columns() WHERE ${IN_MAIN} GROUP BY table_name`,
  );
  return new Map(rows.map((row) => [String(row.table_name), String(row.columns)]));
}

/** The tables a warehouse of each schema version before the marker holds, made once in memory. */
const earlierCatalogs = new Map<number, Promise<Map<string, string>>>();

function earlierCatalog(version: number): Promise<Map<string, string>> {
  let catalog = earlierCatalogs.get(version);
  if (catalog === undefined) {
    catalog = (async () => {
      const instance = await DuckDBInstance.create(':memory:');
      const connection = await instance.connect();
      try {
        await connection.run(CREATE_MIGRATIONS_TABLE);
        for (const migration of MIGRATIONS.filter((m) => m.version <= version)) await connection.run(migration.sql);
        return await tableColumns(connection);
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    })();
    earlierCatalogs.set(version, catalog);
  }
  return catalog;
}

/**
 * The version of a warehouse written before the marker, undefined when the file is none: it holds
 * every table of that version with exactly its columns (schema_migrations included; an analyst's own
 * tables and views beside them do not matter), and its schema_migrations rows are exactly those of
 * its migrations. The columns are compared first, so the rows are read only from a schema_migrations
 * table of this program's shape.
 */
async function unmarkedWarehouseVersion(connection: DuckDBConnection): Promise<number | undefined> {
  const found = await tableColumns(connection);
  for (const migration of MIGRATIONS.filter((m) => m.version < MARKED_FROM_VERSION)) {
    const catalog = await earlierCatalog(migration.version);
    if ([...catalog].some(([table, columns]) => found.get(table) !== columns)) continue;
    const history = await rowsOf(connection, 'SELECT version, name FROM schema_migrations ORDER BY version');
    const expected = MIGRATIONS.filter((m) => m.version <= migration.version);
    const same =
      history.length === expected.length &&
      expected.every((m, i) => history[i]?.version === m.version && history[i]?.name === m.name);
    if (same) return migration.version;
  }
  return undefined;
}

/** What the file is: an empty one, a warehouse (marked, or of a version before the marker), or something else. */
async function fileKindOf(connection: DuckDBConnection): Promise<FileKind> {
  if (await hasTable(connection, WAREHOUSE_MARKER_TABLE)) {
    const [marker] = await rowsOf(connection, `SELECT count(*) AS n FROM ${WAREHOUSE_MARKER_TABLE}`);
    if (Number(marker?.n ?? 0) > 0) return { kind: 'warehouse', version: await appliedVersion(connection) };
  }
  const [held] = await rowsOf(
    connection,
    `SELECT (SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary)
          + (SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() AND NOT internal AND NOT temporary) AS n`,
  );
  if (Number(held?.n ?? 0) === 0) return { kind: 'empty' };
  const version = await unmarkedWarehouseVersion(connection);
  return version === undefined ? { kind: 'foreign' } : { kind: 'warehouse', version };
}

/** The newest schema version applied to a warehouse; 0 for an empty file. Refuses a file that is no warehouse. */
export async function schemaVersionOf(connection: DuckDBConnection, label: string): Promise<number> {
  const file = await fileKindOf(connection);
  if (file.kind === 'foreign')
    throw new WarehouseError(
      `${label} is not a parcel-recon warehouse: it holds tables of its own and no ${WAREHOUSE_MARKER_TABLE} marker`,
      undefined,
      'WAREHOUSE_NOT_OURS',
    );
  return file.kind === 'empty' ? 0 : file.version;
}

function newerSchemaError(label: string, version: number): WarehouseError {
  return new WarehouseError(
    `warehouse ${label} has schema version ${version}, newer than this parcel-recon knows (${SCHEMA_VERSION}); upgrade parcel-recon`,
  );
}

/**
 * Refuses, in one line, a file that cannot be read as it is without writing to it: one at an older
 * schema (its upgrade writes, so it needs a writable open), a newer one, or a DuckDB file that is no
 * warehouse.
 */
export async function requireCurrentSchema(connection: DuckDBConnection, label: string): Promise<void> {
  const version = await schemaVersionOf(connection, label);
  if (version === SCHEMA_VERSION) return;
  if (version === 0)
    throw new WarehouseError(
      `${label} is not a parcel-recon warehouse (it holds nothing)`,
      undefined,
      'WAREHOUSE_NOT_OURS',
    );
  if (version > SCHEMA_VERSION) throw newerSchemaError(label, version);
  throw new WarehouseError(
    `warehouse ${label} has schema version ${version}, older than this parcel-recon's (${SCHEMA_VERSION}): upgrade it with parcel-recon upgrade --db ${label}, or by any command that writes to it`,
  );
}

/**
 * The migrations the file has not had yet, oldest first. Refuses a DuckDB file that is no warehouse,
 * and one whose schema is newer than this program knows: writing to it could lose data.
 */
export async function pendingMigrations(connection: DuckDBConnection, label: string): Promise<Migration[]> {
  const applied = new Set<number>();
  // Read before the first write: a file that is no warehouse is refused and left as it was.
  if ((await schemaVersionOf(connection, label)) > 0) {
    const reader = await connection.runAndReadAll('SELECT version FROM schema_migrations');
    for (const version of reader.getColumnsJS()[0] ?? []) applied.add(Number(version));
  }
  const newest = Math.max(0, ...applied);
  if (newest > SCHEMA_VERSION) throw newerSchemaError(label, newest);
  return [...MIGRATIONS].sort((a, b) => a.version - b.version).filter((m) => !applied.has(m.version));
}

const MIB = 1024 * 1024;

/** The bytes the warehouse's rows take in its file: what a step that copies every table writes again. */
async function bytesInUse(connection: DuckDBConnection): Promise<number> {
  const [size] = await rowsOf(connection, 'SELECT used_blocks * block_size AS bytes FROM pragma_database_size()');
  return Number(size?.bytes ?? 0);
}

/** What a schema upgrade needs of the warehouse's file system, and what it has. */
export interface UpgradeRoom {
  readonly neededBytes: number;
  readonly freeBytes: number;
}

/**
 * The free room the pending steps need on the file system of the warehouse file `file`: a copy of its
 * rows when a step rebuilds every table, else none. Undefined when no step copies.
 */
export async function upgradeRoom(
  connection: DuckDBConnection,
  file: string,
  pending: readonly Migration[],
): Promise<UpgradeRoom | undefined> {
  if (!pending.some((m) => m.copiesEveryTable)) return undefined;
  const room = await statfs(dirname(file));
  return { neededBytes: await bytesInUse(connection), freeBytes: room.bavail * room.bsize };
}

const inMib = (bytes: number) => `${Math.ceil(bytes / MIB)} MB`;

/** Refuses, before anything is written, an upgrade whose copy of the tables the file system has no room for. */
function requireRoom(label: string, room: UpgradeRoom | undefined, pending: readonly Migration[]): void {
  if (room === undefined || room.freeBytes >= room.neededBytes) return;
  const step = pending.find((m) => m.copiesEveryTable);
  throw new WarehouseError(
    `warehouse ${label}: schema step ${step?.version} (${step?.name}) copies every table before it drops the old one and needs ${inMib(room.neededBytes)} free on its file system, which has ${inMib(room.freeBytes)}`,
    undefined,
    'WAREHOUSE_NO_ROOM',
  );
}

/**
 * Applies the migrations the file has not had yet, all in one transaction with their
 * schema_migrations rows: a step that fails leaves the file as it was before the first. A step that
 * copies every table is refused before it starts when the file system of `file` (the warehouse's
 * file; none in memory) has less free room than the copy. Returns the versions applied (none when
 * the schema is current).
 */
export async function applyMigrations(connection: DuckDBConnection, label: string, file?: string): Promise<number[]> {
  const pending = await pendingMigrations(connection, label);
  if (pending.length === 0) return [];
  if (file !== undefined) requireRoom(label, await upgradeRoom(connection, file, pending), pending);
  await connection.run('BEGIN TRANSACTION');
  let step: Migration | undefined;
  try {
    await connection.run(CREATE_MIGRATIONS_TABLE);
    for (step of pending) {
      await connection.run(step.sql);
      await connection.run('INSERT INTO schema_migrations VALUES ($version, $name, current_timestamp)', {
        version: step.version,
        name: step.name,
      });
    }
    step = undefined;
    // A step may rewrite any table's rows: a snapshot exported before it is read again in full.
    if (SCHEMA_VERSION >= PARTITION_CHANGES_VERSION) await connection.run(MARK_EVERY_PARTITION_CHANGED);
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    const what = step === undefined ? 'the upgrade' : `migration ${step.version} (${step.name})`;
    throw new WarehouseError(`warehouse ${label}: ${what} failed: ${firstLineOf(error)}`, { cause: error });
  }
  return pending.map((m) => m.version);
}
