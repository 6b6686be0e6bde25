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
 * Applies the migrations the file has not had yet, each in its own transaction with its
 * schema_migrations row. Returns the versions applied (none when the schema is current). Refuses a
 * file whose schema is newer than this program knows: writing to it could lose data.
 */
export async function applyMigrations(connection: DuckDBConnection, label: string): Promise<number[]> {
  await connection.run(CREATE_MIGRATIONS_TABLE);
  const reader = await connection.runAndReadAll('SELECT version FROM schema_migrations');
  const appliedVersions = new Set(reader.getColumnsJS()[0]?.map(Number) ?? []);
  const newest = Math.max(0, ...appliedVersions);
  if (newest > SCHEMA_VERSION) throw newerSchemaError(label, newest);
  const applied: number[] = [];
  for (const migration of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    if (appliedVersions.has(migration.version)) continue;
    await connection.run('BEGIN TRANSACTION');
    try {
      await connection.run(migration.sql);
      await connection.run('INSERT INTO schema_migrations VALUES ($version, $name, current_timestamp)', {
        version: migration.version,
        name: migration.name,
      });
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK').catch(() => undefined);
      throw new WarehouseError(
        `warehouse ${label}: migration ${migration.version} (${migration.name}) failed: ${firstLineOf(error)}`,
        { cause: error },
      );
    }
    applied.push(migration.version);
  }
  return applied;
}
