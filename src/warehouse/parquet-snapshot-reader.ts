import { join } from 'node:path';
import { SCHEMA_VERSION } from './migrations.js';
import { resolveSnapshot, SnapshotError } from './parquet-snapshot.js';
import { sqlName, sqlText } from './sql-literals.js';
import { Warehouse, type WarehouseOptions } from './warehouse.js';

/**
 * Opens the snapshot `dir` names as a warehouse: an in-memory DuckDB with a view per table and view
 * of the snapshot, under its name in the warehouse, over its Parquet file. Each column is cast back to
 * its type in the warehouse (Parquet keeps JSON as text), so the same SQL gives the same result as on
 * the warehouse. DuckDB reads no file but the snapshot's, `options.directories` (a report's
 * files) and `options.files` (its partner records); given no directory, the settings are locked once
 * the views are made, as a read-only open's are.
 */
export async function openSnapshot(
  dir: string,
  options: Pick<WarehouseOptions, 'directories' | 'files' | 'memoryLimit' | 'tempDirectory'> = {},
): Promise<Warehouse> {
  const { folder, manifest } = await resolveSnapshot(dir);
  // The reports read the tables as this program's schema has them: a snapshot of another is written again.
  if (manifest.schemaVersion !== null && manifest.schemaVersion !== SCHEMA_VERSION)
    throw new SnapshotError(
      `snapshot ${dir} holds schema version ${manifest.schemaVersion}, this parcel-recon reads version ${SCHEMA_VERSION}`,
      'SNAPSHOT_NOT_FOUND',
    );
  const directories = options.directories ?? [];
  const warehouse = await Warehouse.openInMemory(`snapshot ${dir}`, {
    ...options,
    directories: [folder, ...directories],
  });
  try {
    for (const relation of manifest.relations) {
      const columns = relation.columns.map(
        (column) => `CAST(${sqlName(column.name)} AS ${column.type}) AS ${sqlName(column.name)}`,
      );
      await warehouse.run(
        `CREATE VIEW ${sqlName(relation.name)} AS SELECT ${columns.join(', ')} FROM read_parquet(${sqlText(join(folder, relation.file))})`,
      );
    }
    if (directories.length === 0) await warehouse.run('SET lock_configuration = true');
  } catch (error) {
    await warehouse.close();
    throw error;
  }
  return warehouse;
}
