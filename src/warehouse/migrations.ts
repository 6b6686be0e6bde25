import type { DuckDBConnection } from '@duckdb/node-api';
import type { Migration } from './schema/migration.js';
import { MIGRATIONS } from './schema/schema-versions.js';
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

/** The newest schema version the file has had applied; 0 when it has no schema_migrations table. */
export async function schemaVersionOf(connection: DuckDBConnection): Promise<number> {
  const reader = await connection.runAndReadAll(
    "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'schema_migrations'",
  );
  if (Number(reader.getRows()[0]?.[0] ?? 0) === 0) return 0;
  const versions = await connection.runAndReadAll('SELECT max(version) FROM schema_migrations');
  return Number(versions.getRows()[0]?.[0] ?? 0);
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
  const version = await schemaVersionOf(connection);
  if (version === SCHEMA_VERSION) return;
  if (version === 0) throw new WarehouseError(`${label} is not a parcel-recon warehouse (no schema_migrations table)`);
  if (version > SCHEMA_VERSION) throw newerSchemaError(label, version);
  throw new WarehouseError(
    `warehouse ${label} has schema version ${version}, older than this parcel-recon's (${SCHEMA_VERSION}): upgrade it with parcel-recon upgrade --db ${label}, or by any command that writes to it`,
  );
}

/**
 * The migrations the file has not had yet, oldest first. Refuses a file whose schema is newer than
 * this program knows: writing to it could lose data.
 */
export async function pendingMigrations(connection: DuckDBConnection, label: string): Promise<Migration[]> {
  const applied = new Set<number>();
  if ((await schemaVersionOf(connection)) > 0) {
    const reader = await connection.runAndReadAll('SELECT version FROM schema_migrations');
    for (const version of reader.getColumnsJS()[0] ?? []) applied.add(Number(version));
  }
  const newest = Math.max(0, ...applied);
  if (newest > SCHEMA_VERSION) throw newerSchemaError(label, newest);
  return [...MIGRATIONS].sort((a, b) => a.version - b.version).filter((m) => !applied.has(m.version));
}

/**
 * Applies the migrations the file has not had yet, all in one transaction with their
 * schema_migrations rows: a step that fails leaves the file as it was before the first. Returns the
 * versions applied (none when the schema is current).
 */
export async function applyMigrations(connection: DuckDBConnection, label: string): Promise<number[]> {
  const pending = await pendingMigrations(connection, label);
  if (pending.length === 0) return [];
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
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    const what = step === undefined ? 'the upgrade' : `migration ${step.version} (${step.name})`;
    throw new WarehouseError(`warehouse ${label}: ${what} failed: ${firstLineOf(error)}`, { cause: error });
  }
  return pending.map((m) => m.version);
}
