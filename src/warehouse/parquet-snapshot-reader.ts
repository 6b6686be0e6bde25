import { join } from 'node:path';
import pRetry, { AbortError } from 'p-retry';
import { SCHEMA_VERSION } from './migrations.js';
import { resolveSnapshot, SnapshotError, type SnapshotPartition, type SnapshotRelation } from './parquet-snapshot.js';
import { sqlName, sqlText, timestampLiteral } from './sql-literals.js';
import { Warehouse, type WarehouseOptions } from './warehouse.js';

/** How often a reading runs again over a newer snapshot before its failure stands: an export takes seconds. */
const SNAPSHOT_REREADS = 3;

/** What a snapshot reader may read and use besides the snapshot. */
type SnapshotReaderOptions = Pick<WarehouseOptions, 'directories' | 'files' | 'memoryLimit' | 'tempDirectory'>;

/** Instants (epoch ms) a reader's queries select rows within: `start` inclusive, `end` exclusive, either open. */
export interface SnapshotWindow {
  readonly start?: number | undefined;
  readonly end?: number | undefined;
}

/**
 * A relation's rows over its files: `carrier` and `month` of a partitioned one come from the folders'
 * names. Given a window, a spanned relation's partitions wholly before or after it are read in branches
 * of their own, each with the condition all its rows meet (`order_date < start`): DuckDB drops a branch
 * whose condition contradicts the query's (a report's days) and reads none of its data, while any
 * other query reads it whole, so the rows are the same for every query.
 */
function relationSql(folder: string, relation: SnapshotRelation, window: SnapshotWindow | undefined): string {
  const columns = relation.columns.map(
    (column) => `CAST(${sqlName(column.name)} AS ${column.type}) AS ${sqlName(column.name)}`,
  );
  // A partitioned table with no rows has no file: its columns, and no row.
  if (relation.partitions.every((partition) => partition.files.length === 0))
    return `SELECT ${relation.columns.map((column) => `CAST(NULL AS ${column.type}) AS ${sqlName(column.name)}`).join(', ')} WHERE false`;
  const hive = relation.partitionedBy === null ? '' : ', hive_partitioning = true, hive_types_autocast = false';
  const read = (partitions: readonly SnapshotPartition[], condition?: string) => {
    const files = partitions.flatMap((partition) => partition.files.map((file) => sqlText(join(folder, file.path))));
    return `SELECT ${columns.join(', ')} FROM read_parquet([${files.join(', ')}]${hive})${condition === undefined ? '' : ` WHERE ${condition}`}`;
  };
  const column = relation.spannedBy;
  if (column === undefined || window === undefined) return read(relation.partitions);
  const { start, end } = window;
  const before = relation.partitions.filter(
    (partition) => start !== undefined && partition.span !== undefined && partition.span.max < start * 1000,
  );
  const after = relation.partitions.filter(
    (partition) => end !== undefined && partition.span !== undefined && partition.span.min >= end * 1000,
  );
  const within = relation.partitions.filter((partition) => !before.includes(partition) && !after.includes(partition));
  const branches = [
    within.length === 0 ? undefined : read(within),
    before.length === 0 ? undefined : read(before, `${sqlName(column)} < ${timestampLiteral(start!)}`),
    after.length === 0 ? undefined : read(after, `${sqlName(column)} >= ${timestampLiteral(end!)}`),
  ];
  return branches.filter((branch) => branch !== undefined).join(' UNION ALL ');
}

/**
 * Makes the warehouse's views over the snapshot's tables, each once the views it reads are made:
 * the manifest lists them by name, not in the order they depend on each other.
 */
async function createViews(warehouse: Warehouse, relations: readonly SnapshotRelation[]): Promise<void> {
  let pending = relations.filter((relation) => relation.kind === 'view');
  while (pending.length > 0) {
    const waiting: SnapshotRelation[] = [];
    let failure: unknown;
    for (const view of pending)
      await warehouse.run(view.definition ?? '').catch((error: unknown) => {
        failure = error;
        waiting.push(view);
      });
    if (waiting.length === pending.length) throw failure;
    pending = waiting;
  }
}

/**
 * Opens the snapshot `dir` names as a warehouse: an in-memory DuckDB with a view per table and view
 * of the snapshot, under its name in the warehouse: a table's over the files its manifest names, a
 * view's the warehouse's statement over those (read once, so
 * an export meanwhile changes nothing this reads). Each column is cast back to its type in the
 * warehouse (Parquet keeps JSON as text), so the same SQL gives the same result as on the warehouse.
 * DuckDB reads no file but the snapshot's, `options.directories` (a report's files) and
 * `options.files` (its partner records); given no directory, the settings are locked once the views
 * are made, as a read-only open's are. Given `window`, the instants a reader's queries select rows
 * within (a report's days), those queries read no data of a partition whose span lies outside it.
 */
export async function openSnapshot(
  dir: string,
  options: SnapshotReaderOptions = {},
  window?: SnapshotWindow,
): Promise<Warehouse> {
  return (await openSnapshotReader(dir, options, window)).reader;
}

/** openSnapshot's reader, with the export it came from (its manifest's `exportedAt`). */
async function openSnapshotReader(
  dir: string,
  options: SnapshotReaderOptions,
  window: SnapshotWindow | undefined,
): Promise<{ reader: Warehouse; exportedAt: string }> {
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
    for (const relation of manifest.relations)
      if (relation.kind === 'table')
        await warehouse.run(`CREATE VIEW ${sqlName(relation.name)} AS ${relationSql(folder, relation, window)}`);
    await createViews(warehouse, manifest.relations);
    if (directories.length === 0) await warehouse.run('SET lock_configuration = true');
  } catch (error) {
    await warehouse.close();
    throw error;
  }
  return { reader: warehouse, exportedAt: manifest.exportedAt };
}

/** Whether `dir`'s snapshot is no longer the one exported at `exportedAt`: an export has replaced it since. */
async function replacedSince(dir: string, exportedAt: string): Promise<boolean> {
  try {
    const { manifest } = await resolveSnapshot(dir);
    return manifest.exportedAt !== exportedAt;
  } catch {
    return false;
  }
}

/**
 * Runs `work` over the snapshot at `dir`, opened as openSnapshot opens it, then closes it. An export
 * that replaces the snapshot meanwhile removes the files the old manifest named, and a query of the
 * work may then find one gone: the work runs again from its start over the new snapshot, so that it
 * reads one whole snapshot, the old or the new. Any other failure is the work's own, at once.
 */
export async function readSnapshot<T>(
  dir: string,
  options: SnapshotReaderOptions,
  window: SnapshotWindow | undefined,
  work: (reader: Warehouse) => Promise<T>,
): Promise<T> {
  const abort = (error: unknown) => (error instanceof Error ? new AbortError(error) : error);
  return pRetry(
    async () => {
      const { reader, exportedAt } = await openSnapshotReader(dir, options, window).catch((error: unknown) => {
        throw abort(error);
      });
      try {
        return await work(reader);
      } catch (error) {
        throw (await replacedSince(dir, exportedAt)) ? error : abort(error);
      } finally {
        await reader.close();
      }
    },
    { retries: SNAPSHOT_REREADS, minTimeout: 0, maxTimeout: 0 },
  );
}
