import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { diskFaultOf, makeFolder } from '../errors/disk-fault.js';
import { fsyncPath } from './durable-files.js';
import {
  linkFolderOf,
  linkTargetOf,
  MANIFEST_FILE,
  SNAPSHOT_FORMAT,
  SnapshotError,
  type SnapshotManifest,
  type SnapshotRelation,
  snapshotIdOfTarget,
  snapshotStoreOf,
} from './parquet-snapshot.js';
import { isProcessAlive } from './process-liveness.js';
import { sqlName, sqlText } from './sql-literals.js';
import type { SqlRunner, WarehouseSession } from './warehouse.js';

export interface SnapshotExport {
  /** The link readers open. */
  readonly to: string;
  /** The folder it now links to. */
  readonly folder: string;
  readonly manifest: SnapshotManifest;
}

const PARTIAL = /\.partial-(\d+)$/;

/** A partial folder this process, or another live export, is writing. */
function isPartialOfLiveExport(pid: number): boolean {
  return pid === process.pid || isProcessAlive(pid);
}

/** The snapshot `dir` links to now; undefined when nothing is there yet. Anything else there is refused. */
async function currentSnapshotId(dir: string): Promise<string | undefined> {
  const found = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (found === undefined) return undefined;
  const id = found.isSymbolicLink() ? snapshotIdOfTarget(dir, await readlink(dir)) : undefined;
  if (id === undefined)
    throw new SnapshotError(
      `${dir} is not a link to a snapshot, and an export replaces only those`,
      'SNAPSHOT_PATH_TAKEN',
    );
  return id;
}

/** A snapshot's name: when it was exported, and a few random letters so that two exports never share one. */
function snapshotId(exportedAt: Date): string {
  return `${exportedAt
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/** The tables and views of the warehouse (not the temporary ones of this connection), by name. */
async function relationsOf(sql: SqlRunner): Promise<{ name: string; kind: 'table' | 'view' }[]> {
  const reader = await sql.readAll(`
    SELECT table_name AS name, 'table' AS kind FROM duckdb_tables()
      WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary
    UNION ALL
    SELECT view_name, 'view' FROM duckdb_views()
      WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal AND NOT temporary
    ORDER BY name`);
  return reader.getRowObjectsJS() as { name: string; kind: 'table' | 'view' }[];
}

async function columnsOf(sql: SqlRunner, name: string): Promise<{ name: string; type: string }[]> {
  const reader = await sql.readAll(`DESCRIBE ${sqlName(name)}`);
  return (reader.getRowObjectsJS() as { column_name: string; column_type: string }[]).map((column) => ({
    name: column.column_name,
    type: column.column_type,
  }));
}

async function schemaVersion(sql: SqlRunner): Promise<number | null> {
  const reader = await sql.readAll('SELECT max(version) AS version FROM schema_migrations');
  const version = reader.getRowObjectsJS()[0]?.version;
  return version === null || version === undefined ? null : Number(version);
}

/** Writes every table and view into `folder` in one transaction, so the files agree with each other. */
async function writeRelations(warehouse: WarehouseSession, folder: string): Promise<SnapshotRelation[]> {
  return warehouse.transaction(async (sql) => {
    const relations: SnapshotRelation[] = [];
    for (const { name, kind } of await relationsOf(sql)) {
      const file = `${name}.parquet`;
      const rows = await sql.run(
        `COPY (SELECT * FROM ${sqlName(name)}) TO ${sqlText(join(folder, file))} (FORMAT parquet)`,
      );
      relations.push({ name, kind, file, rows, columns: await columnsOf(sql, name) });
    }
    return relations;
  });
}

/**
 * Removes what earlier exports left in the store: their snapshots but the current and the one before
 * it, and the partial folders and links of exports that no longer run.
 */
async function removeLeftovers(store: string, keep: readonly (string | undefined)[]): Promise<void> {
  for (const entry of await readdir(store)) {
    const partial = PARTIAL.exec(entry);
    if (partial !== null ? isPartialOfLiveExport(Number(partial[1])) : keep.includes(entry)) continue;
    await rm(join(store, entry), { recursive: true, force: true });
  }
}

/**
 * Exports the warehouse as a Parquet snapshot at `to` (see parquet-snapshot.ts for the layout): every
 * table and view into a new folder, flushed to disk, then a new link renamed over `to`. A kill at any
 * point leaves `to` linked to a whole snapshot; the next export removes what it left.
 */
export async function exportSnapshot(
  warehouse: WarehouseSession,
  to: string,
  exportedAt: Date,
): Promise<SnapshotExport> {
  const dir = resolve(to);
  const store = snapshotStoreOf(dir);
  // Refused before anything is made: a path that is not a link to a snapshot gets no store beside it.
  const current = await currentSnapshotId(dir);
  const storeMade = (await lstat(store).catch(() => undefined)) === undefined;
  await makeFolder(store);
  const id = snapshotId(exportedAt);
  const partial = join(store, `${id}.partial-${process.pid}`);
  const link = join(store, `link.partial-${process.pid}`);
  try {
    return await writeSnapshot(warehouse, { dir, store, id, partial, link, current, exportedAt });
  } catch (error) {
    // What this export made goes, so a full disk gets its room back; the snapshot before it stays.
    await rm(partial, { recursive: true, force: true });
    await rm(link, { force: true });
    if ((await currentSnapshotId(dir).catch(() => undefined)) !== id)
      await rm(join(store, id), { recursive: true, force: true });
    if (storeMade) await rmdir(store).catch(() => undefined);
    throw diskFaultOf(error) ?? error;
  }
}

interface SnapshotPaths {
  readonly dir: string;
  readonly store: string;
  readonly id: string;
  readonly partial: string;
  readonly link: string;
  /** The snapshot `dir` linked to when the export began. */
  readonly current: string | undefined;
  readonly exportedAt: Date;
}

/** Writes the snapshot into its partial folder, names it, and swaps the link at `dir` to it. */
async function writeSnapshot(warehouse: WarehouseSession, paths: SnapshotPaths): Promise<SnapshotExport> {
  const { dir, store, id, partial, link, exportedAt } = paths;
  await removeLeftovers(store, [paths.current]);
  await mkdir(partial);
  const relations = await writeRelations(warehouse, partial);
  const manifest: SnapshotManifest = {
    format: SNAPSHOT_FORMAT,
    schemaVersion: await schemaVersion(warehouse),
    exportedAt: exportedAt.toISOString(),
    relations,
  };
  await writeFile(join(partial, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const file of [MANIFEST_FILE, ...relations.map((relation) => relation.file)])
    await fsyncPath(join(partial, file));
  await fsyncPath(partial);
  const folder = join(store, id);
  await rename(partial, folder);
  await fsyncPath(store);
  await rm(link, { force: true });
  await symlink(linkTargetOf(dir, id), link);
  // Read again just before the swap: another export may have published a snapshot since this one began.
  const replaced = await currentSnapshotId(dir);
  await rename(link, dir);
  await fsyncPath(linkFolderOf(dir));
  await removeLeftovers(store, [id, replaced]);
  return { to: dir, folder, manifest };
}

/** The export's figures: what a monitor reads with --json, and the lines a person reads. */
export function snapshotSummary(written: SnapshotExport) {
  const { relations } = written.manifest;
  return {
    to: written.to,
    folder: written.folder,
    schemaVersion: written.manifest.schemaVersion,
    exportedAt: written.manifest.exportedAt,
    tables: relations.filter((relation) => relation.kind === 'table').length,
    views: relations.filter((relation) => relation.kind === 'view').length,
    rows: Object.fromEntries(relations.map((relation) => [relation.name, relation.rows])),
  };
}
