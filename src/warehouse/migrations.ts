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
  if (newest > SCHEMA_VERSION) {
    throw new WarehouseError(
      `warehouse ${label} has schema version ${newest}, newer than this parcel-recon knows (${SCHEMA_VERSION}); upgrade parcel-recon`,
    );
  }
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
