import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { diskFaultOf, makeFolder } from '../errors/disk-fault.js';
import { fsyncPath } from './durable-files.js';
import {
  filesOfManifest,
  legacySnapshotStoreOf,
  MANIFEST_FILE,
  NULL_PARTITION,
  readManifest,
  SNAPSHOT_FORMAT,
  SnapshotError,
  type SnapshotFile,
  type SnapshotManifest,
  type SnapshotPartition,
  type SnapshotRelation,
} from './parquet-snapshot.js';
import { PARTITION_CHANGES_TABLE, type PartitionChanges, readPartitionChanges } from './partition-change-ledger.js';
import { isProcessAlive } from './process-liveness.js';
import { PARTITIONED_TABLES, type Partition, type PartitionSpec, partitionKey } from './snapshot-partitions.js';
import { sqlName, sqlText } from './sql-literals.js';
import type { SqlRunner, WarehouseSession } from './warehouse.js';

export interface SnapshotExport {
  /** The snapshot folder readers open. */
  readonly to: string;
  readonly manifest: SnapshotManifest;
  /** Partitions (a small table or view counts as one) written by this export, and kept from the one before. */
  readonly partitionsWritten: number;
  readonly partitionsKept: number;
}

/**
 * DuckDB's memory limit for an export, unless told otherwise. The Parquet writers' row groups and
 * buffers live beside it, outside DuckDB's buffer manager, so the process takes about twice the limit:
 * 256MB keeps an export of any size well under 1 GB.
 */
export const EXPORT_MEMORY_LIMIT = '256MB';

/** The mark of an export under way in the snapshot folder: `.export-<pid>`. */
const EXPORT_MARK = /^\.export-(\d+)$/;
const PARTIAL_MANIFEST = /^manifest\.json\.partial-\d+$/;
/**
 * Partitions one COPY writes: DuckDB holds a row group per open partition, so a full export of ten
 * years at once would not keep to the memory limit; each batch is one more read of the table.
 */
const PARTITIONS_PER_WRITE = 6;

/**
 * Where an export cuts a partition into several files: one of more than `rows` rows is written on its
 * own, in files of about `bytes` each (DuckDB cannot cut the files of a write of several partitions
 * by size), so that no file of the snapshot grows past what an engine reads well in one task.
 */
export interface SnapshotFileBound {
  readonly rows: number;
  readonly bytes: string;
}

export const SNAPSHOT_FILE_BOUND: SnapshotFileBound = { rows: 1_000_000, bytes: '128MB' };

/** What is at the snapshot's path before the export. */
type Previous =
  | { readonly kind: 'none'; readonly exists: boolean }
  | { readonly kind: 'folder'; readonly manifest: SnapshotManifest | undefined }
  /** A link of the layout before partitions: the new folder is written beside it, then takes its place. */
  | { readonly kind: 'link' };

/** A snapshot's name: when it was exported, and a few random letters so that two exports never share one. */
function exportId(exportedAt: Date): string {
  return `${exportedAt
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

function notSnapshot(dir: string): SnapshotError {
  return new SnapshotError(
    `${dir} is not a snapshot folder, and an export writes only into those`,
    'SNAPSHOT_PATH_TAKEN',
  );
}

/** What `dir` holds now. Anything but a snapshot folder, an empty folder, or one a killed first export left is refused. */
async function previousAt(dir: string): Promise<Previous> {
  const found = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (found === undefined) return { kind: 'none', exists: false };
  if (found.isSymbolicLink()) {
    const target = await readlink(dir);
    if (target.startsWith(`${basename(dir)}.snapshots/`)) return { kind: 'link' };
    throw notSnapshot(dir);
  }
  if (!found.isDirectory()) throw notSnapshot(dir);
  const entries = await readdir(dir);
  if (entries.includes(MANIFEST_FILE)) {
    try {
      return { kind: 'folder', manifest: await readManifest(dir) };
    } catch (error) {
      if (error instanceof SnapshotError) throw notSnapshot(dir);
      throw error;
    }
  }
  if (entries.length === 0) return { kind: 'none', exists: true };
  if (entries.some((entry) => EXPORT_MARK.test(entry))) return { kind: 'folder', manifest: undefined };
  throw notSnapshot(dir);
}

/**
 * Marks `folder` as written by this process; refused while another live export writes it. The mark is
 * made before the others are read, so that of two exports starting at once neither goes on unseen.
 */
async function claim(folder: string): Promise<string> {
  const mark = join(folder, `.export-${process.pid}`);
  await writeFile(mark, '');
  for (const entry of await readdir(folder)) {
    const other = EXPORT_MARK.exec(entry);
    if (other === null || Number(other[1]) === process.pid) continue;
    const pid = Number(other[1]);
    if (isProcessAlive(pid)) {
      await rm(mark, { force: true });
      throw new SnapshotError(`another export (PID ${pid}) is writing ${folder}`, 'SNAPSHOT_PATH_TAKEN');
    }
    await rm(join(folder, entry), { force: true });
  }
  return mark;
}

/** Every file under `folder`'s subfolders, relative to it. */
async function dataFilesOf(folder: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    for (const file of await readdir(join(folder, entry.name), { recursive: true, withFileTypes: true }))
      if (file.isFile()) files.push(relative(folder, join(file.parentPath, file.name)));
  }
  return files;
}

/** Removes `paths` (relative to `folder`) and then the folders they leave empty. */
async function removeFiles(folder: string, paths: Iterable<string>): Promise<void> {
  const parents = new Set<string>();
  for (const path of paths) {
    await rm(join(folder, path), { force: true });
    for (let parent = dirname(path); parent !== '.'; parent = dirname(parent)) parents.add(parent);
  }
  // Deepest first, so that a partition's folder goes before its carrier's.
  for (const parent of [...parents].sort((a, b) => b.length - a.length))
    await rmdir(join(folder, parent)).catch(() => undefined);
}

/** Removes what a killed export left: its manifest, and the files no manifest names, its staging folder's among them. */
async function removeLeftovers(folder: string, manifest: SnapshotManifest | undefined): Promise<void> {
  const named = new Set(manifest === undefined ? [] : filesOfManifest(manifest));
  for (const entry of await readdir(folder))
    if (PARTIAL_MANIFEST.test(entry)) await rm(join(folder, entry), { force: true });
  await removeFiles(
    folder,
    (await dataFilesOf(folder)).filter((path) => !named.has(path)),
  );
}

/** The tables and views of the warehouse (not the temporary ones of this connection), by name. */
async function relationsOf(sql: SqlRunner): Promise<{ name: string; kind: 'table' | 'view' }[]> {
  const reader = await sql.readAll(`
    SELECT table_name AS name, 'table' AS kind FROM duckdb_tables()
      WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary
        AND table_name <> '${PARTITION_CHANGES_TABLE}'
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

/** The partition a manifest key names. */
function partitionOfKey(key: string): Partition {
  const [, carrier, month] = /^carrier=(.*)\/month=(.*)$/.exec(key) ?? [];
  if (carrier === undefined || month === undefined) throw new RangeError(`not a partition key: ${key}`);
  return { carrier, month: month === NULL_PARTITION ? null : month };
}

/** `carrier` and `month` of the relation in scope are those of one of `partitions`. */
function inPartitions(partitions: readonly Partition[]): string {
  const each = partitions.map(
    ({ carrier, month }) => `{'c': ${sqlText(carrier)}, 'm': ${month === null ? 'NULL' : sqlText(month)}}`,
  );
  return `{'c': carrier, 'm': month} IN (${each.join(', ')})`;
}

/** Partitions in the order of carrier, then month, a month's NULL last, as `ORDER BY ALL` gives them. */
function byCarrierAndMonth(a: SnapshotPartition, b: SnapshotPartition): number {
  const [left, right] = [partitionOfKey(a.key), partitionOfKey(b.key)];
  if (left.carrier !== right.carrier) return left.carrier < right.carrier ? -1 : 1;
  if (left.month === right.month) return 0;
  if (left.month === null) return 1;
  if (right.month === null) return -1;
  return left.month < right.month ? -1 : 1;
}

/** What a relation's rows come to now: a count and a hash of every row, per partition. */
function fingerprintOf(rows: bigint | number, hash: string | null): string {
  return `${rows}:${hash ?? 0}`;
}

/** How many rows each of `files` (relative to `folder`) holds, from its Parquet footer. */
async function rowsOfFiles(sql: SqlRunner, folder: string, files: readonly string[]): Promise<SnapshotFile[]> {
  if (files.length === 0) return [];
  const list = files.map((file) => sqlText(join(folder, file))).join(', ');
  const reader = await sql.readAll(`SELECT file_name, num_rows FROM parquet_file_metadata([${list}])`);
  const rows = new Map(
    (reader.getRowObjectsJS() as { file_name: string; num_rows: bigint }[]).map((row) => [
      relative(folder, row.file_name),
      Number(row.num_rows),
    ]),
  );
  return files.map((path) => ({ path, rows: rows.get(path) ?? 0 }));
}

interface RelationWrite {
  readonly sql: SqlRunner;
  /** Where the files are written, in the layout of the snapshot folder: the export's staging folder. */
  readonly folder: string;
  readonly id: string;
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly columns: { name: string; type: string }[];
  /** The relation in the snapshot before, when its columns are the same: its partitions may be kept. */
  readonly before: SnapshotRelation | undefined;
  /**
   * The keys of the partitions changed since the snapshot before, when the ledger covers all that
   * changed since: the others are kept as they are, unread. Undefined: every partition's rows are read.
   */
  readonly changed: ReadonlySet<string> | undefined;
  readonly fileBound: SnapshotFileBound;
}

/** What a partition's rows come to, from one aggregate over them. */
interface PartitionStat extends Partition {
  readonly rows: bigint;
  readonly hash: string | null;
  readonly span_min?: bigint | null;
  readonly span_max?: bigint | null;
  readonly span_whole?: boolean;
}

/** The aggregates of a partition's span of `column` (microseconds), when its spec has one. */
function spanColumns(column: string | undefined): string {
  if (column === undefined) return '';
  const value = `r.${sqlName(column)}`;
  return `, epoch_us(min(${value})) AS span_min, epoch_us(max(${value})) AS span_max, count(${value}) = count(*) AS span_whole`;
}

/** The span a partition's manifest entry keeps: only of a column every row has, as a reader skips by it. */
function spanOf(stat: PartitionStat): Pick<SnapshotPartition, 'span'> {
  if (stat.span_whole !== true || stat.span_min == null || stat.span_max == null) return {};
  return { span: { min: Number(stat.span_min), max: Number(stat.span_max) } };
}

/** A large table: the partitions whose rows changed since the snapshot before are written again, the others kept. */
async function writePartitioned(write: RelationWrite, spec: PartitionSpec): Promise<SnapshotRelation> {
  const { sql, folder, id, name } = write;
  const before = new Map((write.before?.partitions ?? []).map((partition) => [partition.key, partition]));
  // With the ledger, only the changed partitions are read; those it does not name stay as they were.
  const read = write.changed === undefined ? undefined : [...write.changed].map(partitionOfKey);
  const partitions: SnapshotPartition[] =
    read === undefined ? [] : [...before.values()].filter((partition) => !write.changed!.has(partition.key));
  const changed: PartitionStat[] = [];
  if (read === undefined || read.length > 0) {
    const rows = spec.rows(name, read);
    const stats = (
      await sql.readAll(
        `SELECT carrier, month, count(*) AS rows, sum(hash(r))::VARCHAR AS hash${spanColumns(spec.spannedBy)}
         FROM (${rows}) AS r ${read === undefined ? '' : `WHERE ${inPartitions(read)}`} GROUP BY carrier, month ORDER BY ALL`,
      )
    ).getRowObjectsJS() as unknown as PartitionStat[];
    for (const stat of stats) {
      const key = partitionKey(stat);
      const fingerprint = fingerprintOf(stat.rows, stat.hash);
      const kept = before.get(key);
      if (kept?.fingerprint === fingerprint) partitions.push(kept);
      else {
        changed.push(stat);
        partitions.push({ key, rows: Number(stat.rows), fingerprint, files: [], ...spanOf(stat) });
      }
    }
  }
  const byKey = new Map<string, SnapshotFile[]>();
  const target = join(folder, name);
  const keep = async (reader: Awaited<ReturnType<SqlRunner['readAll']>>) => {
    const written = ((reader.getRowObjectsJS()[0]?.Files ?? []) as string[]).map((file) => relative(folder, file));
    for (const file of await rowsOfFiles(sql, folder, written)) {
      const key = relative(target, dirname(join(folder, file.path)));
      byKey.set(key, [...(byKey.get(key) ?? []), file]);
    }
  };
  const large = changed.filter((partition) => partition.rows > write.fileBound.rows);
  const small = changed.filter((partition) => !large.includes(partition));
  // A partitioned write keeps a file open, and a row group in memory, per partition: a few at a time.
  for (let first = 0; first < small.length; first += PARTITIONS_PER_WRITE) {
    const batch = small.slice(first, first + PARTITIONS_PER_WRITE);
    const every = read === undefined && batch.length === partitions.length;
    await keep(
      await sql.readAll(
        `COPY (SELECT * FROM (${spec.rows(name, every ? undefined : batch)}) ${every ? '' : `WHERE ${inPartitions(batch)}`})
          TO ${sqlText(target)}
          (FORMAT parquet, PARTITION_BY (carrier, month), FILENAME_PATTERN ${sqlText(`part-${id}-{i}`)}, RETURN_FILES true, OVERWRITE_OR_IGNORE)`,
      ),
    );
  }
  for (const partition of large) {
    const into = join(target, partitionKey(partition));
    await mkdir(dirname(into), { recursive: true });
    // The folder names the carrier and the month, as a partitioned write leaves them out of the files.
    await keep(
      await sql.readAll(
        `COPY (SELECT * EXCLUDE (carrier, month) FROM (${spec.rows(name, [partition])}) WHERE ${inPartitions([partition])})
          TO ${sqlText(into)}
          (FORMAT parquet, FILE_SIZE_BYTES ${sqlText(write.fileBound.bytes)}, FILENAME_PATTERN ${sqlText(`part-${id}-{i}`)}, RETURN_FILES true)`,
      ),
    );
  }
  return {
    name,
    kind: write.kind,
    partitionedBy: spec.column,
    ...(spec.spannedBy === undefined ? {} : { spannedBy: spec.spannedBy }),
    rows: partitions.reduce((sum, partition) => sum + partition.rows, 0),
    definition: null,
    columns: write.columns,
    partitions: partitions.sort(byCarrierAndMonth).map((partition) => {
      if (partition.files.length > 0) return partition;
      const files = byKey.get(partition.key);
      if (files === undefined) throw new Error(`the export wrote no file for ${name} ${partition.key}`);
      return { ...partition, files };
    }),
  };
}

/** A small table as one file, written again when its rows changed. */
async function writeWhole(write: RelationWrite): Promise<SnapshotRelation> {
  const { sql, folder, id, name, kind } = write;
  const [stat] = (
    await sql.readAll(`SELECT count(*) AS rows, sum(hash(r))::VARCHAR AS hash FROM ${sqlName(name)} AS r`)
  ).getRowObjectsJS() as { rows: bigint; hash: string | null }[];
  const fingerprint = fingerprintOf(stat!.rows, stat!.hash);
  const relation = { name, kind, partitionedBy: null, definition: null, columns: write.columns };
  const kept = write.before?.partitions[0];
  if (kept !== undefined && kept.fingerprint === fingerprint)
    return { ...relation, rows: kept.rows, partitions: [kept] };
  const path = join(name, `part-${id}.parquet`);
  await mkdir(join(folder, name), { recursive: true });
  const rows = await sql.run(
    `COPY (SELECT * FROM ${sqlName(name)}) TO ${sqlText(join(folder, path))} (FORMAT parquet)`,
  );
  return { ...relation, rows, partitions: [{ key: '', rows, fingerprint, files: [{ path, rows }] }] };
}

/**
 * A view: its statement, not its rows. The report views are computed over every order and the time
 * they are read; a reader computes them over the snapshot's tables, so no export writes them whole.
 */
async function viewOf(write: RelationWrite): Promise<SnapshotRelation> {
  const [view] = (
    await write.sql.readAll(
      'SELECT sql FROM duckdb_views() WHERE database_name = current_database() AND schema_name = $1 AND view_name = $2',
      ['main', write.name],
    )
  ).getRowObjectsJS() as { sql: string }[];
  return {
    name: write.name,
    kind: 'view',
    partitionedBy: null,
    rows: null,
    definition: view!.sql,
    columns: write.columns,
    partitions: [],
  };
}

/**
 * The partitions of `table` changed since the snapshot before, current to the ledger's `since`; undefined
 * when the ledger does not cover everything since (no snapshot before, one written before the ledger,
 * or a change of the whole table or of every table after it).
 */
function changedSince(changes: PartitionChanges, since: number | undefined, table: string): Set<string> | undefined {
  if (since === undefined || changes.everything > since) return undefined;
  const recorded = changes.tables.get(table);
  if (recorded === undefined) return new Set();
  if (recorded.whole > since) return undefined;
  return new Set([...recorded.partitions].filter(([, sequence]) => sequence > since).map(([key]) => key));
}

/**
 * Writes what changed of every table and view into `folder` in one transaction, so the files agree with
 * each other; returns them with the ledger's sequence number they are current to.
 */
async function writeRelations(
  warehouse: WarehouseSession,
  folder: string,
  id: string,
  before: SnapshotManifest | undefined,
  fileBound: SnapshotFileBound,
): Promise<{ relations: SnapshotRelation[]; changeSequence: number }> {
  return warehouse.transaction(async (sql) => {
    const since = before?.changeSequence;
    const changes = await readPartitionChanges(sql, since);
    const relations: SnapshotRelation[] = [];
    for (const { name, kind } of await relationsOf(sql)) {
      const columns = await columnsOf(sql, name);
      const spec = kind === 'table' ? PARTITIONED_TABLES.get(name) : undefined;
      const earlier = before?.relations.find((relation) => relation.name === name);
      const same =
        earlier !== undefined &&
        earlier.kind === kind &&
        earlier.partitionedBy === (spec?.column ?? null) &&
        JSON.stringify(earlier.columns) === JSON.stringify(columns);
      const write: RelationWrite = {
        sql,
        folder,
        id,
        name,
        kind,
        columns,
        before: same ? earlier : undefined,
        changed: same ? changedSince(changes, since, name) : undefined,
        fileBound,
      };
      if (kind === 'view') relations.push(await viewOf(write));
      else relations.push(spec === undefined ? await writeWhole(write) : await writePartitioned(write, spec));
    }
    return { relations, changeSequence: changes.current };
  });
}

/**
 * Moves the files an export wrote from its staging folder into their partitions' folders, each whole
 * (a rename), and flushes them and their folders to the disk before the manifest names them.
 */
async function publishWritten(staging: string, folder: string, paths: readonly string[]): Promise<void> {
  const parents = new Set<string>();
  for (const path of paths) {
    await mkdir(join(folder, dirname(path)), { recursive: true });
    await rename(join(staging, path), join(folder, path));
    await fsyncPath(join(folder, path));
    for (let parent = dirname(path); parent !== '.'; parent = dirname(parent)) parents.add(parent);
  }
  for (const parent of parents) await fsyncPath(join(folder, parent));
  await fsyncPath(folder);
}

/**
 * Exports the warehouse as a Parquet snapshot into the folder `to` (see parquet-snapshot.ts for the
 * layout): the partitions whose rows changed since the snapshot there, written under new file names
 * into a hidden staging folder and moved into their partitions' folders once all are written, flushed
 * to disk, then a new manifest renamed over the old, then the files it no longer names removed. A
 * reader of the plain folder never sees a file being written, and sees a rewritten partition's old and
 * new file together only between those moves and the removals. A kill at any point leaves the manifest
 * naming a whole snapshot; the next export removes what it left.
 */
export async function exportSnapshot(
  warehouse: WarehouseSession,
  to: string,
  exportedAt: Date,
  fileBound = SNAPSHOT_FILE_BOUND,
): Promise<SnapshotExport> {
  const dir = resolve(to);
  // Refused before anything is made: a path that is not a snapshot folder gets nothing written in or beside it.
  const previous = await previousAt(dir);
  const folder = previous.kind === 'link' ? `${dir}.partial-${process.pid}` : dir;
  const made = previous.kind === 'link' || (previous.kind === 'none' && !previous.exists);
  if (previous.kind === 'link') await rm(folder, { recursive: true, force: true });
  await makeFolder(folder);
  const id = exportId(exportedAt);
  const partialManifest = join(folder, `${MANIFEST_FILE}.partial-${process.pid}`);
  // Hidden (a leading dot) and outside every table's folder: engines reading the folder skip it.
  const staging = join(folder, `.partial-${process.pid}`);
  let mark: string | undefined;
  let published = false;
  try {
    mark = await claim(folder);
    const before = previous.kind === 'folder' ? previous.manifest : undefined;
    await removeLeftovers(folder, before);
    await mkdir(staging);
    const { relations, changeSequence } = await writeRelations(warehouse, staging, id, before, fileBound);
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT,
      schemaVersion: await schemaVersion(warehouse),
      exportedAt: exportedAt.toISOString(),
      changeSequence,
      relations,
    };
    const kept = new Set(before === undefined ? [] : filesOfManifest(before));
    const written = filesOfManifest(manifest).filter((path) => !kept.has(path));
    await publishWritten(staging, folder, written);
    await rm(staging, { recursive: true, force: true });
    await writeFile(partialManifest, `${JSON.stringify(manifest, null, 2)}\n`);
    await fsyncPath(partialManifest);
    await rename(partialManifest, join(folder, MANIFEST_FILE));
    await fsyncPath(folder);
    published = true;
    if (previous.kind === 'link') await replaceLink(dir, folder);
    // Only now that the manifest names the new files: the ones it no longer names go.
    const named = new Set(filesOfManifest(manifest));
    await removeFiles(
      dir,
      [...kept].filter((path) => !named.has(path)),
    );
    const partitions = manifest.relations.reduce((sum, relation) => sum + relation.partitions.length, 0);
    const partitionsWritten = manifest.relations.reduce(
      (sum, relation) =>
        sum + relation.partitions.filter((partition) => partition.files.some((file) => !kept.has(file.path))).length,
      0,
    );
    return { to: dir, manifest, partitionsWritten, partitionsKept: partitions - partitionsWritten };
  } catch (error) {
    // What this export made goes, so a full disk gets its room back; the snapshot before it stays.
    if (!published) await discard(folder, id, made, partialManifest, staging);
    throw diskFaultOf(error) ?? error;
  } finally {
    if (mark !== undefined)
      await rm(previous.kind === 'link' && published ? join(dir, basename(mark)) : mark, { force: true });
  }
}

/** Removes what an export that failed wrote: its files, its manifest, and the folder when it made it. */
async function discard(
  folder: string,
  id: string,
  made: boolean,
  partialManifest: string,
  staging: string,
): Promise<void> {
  if (made) {
    await rm(folder, { recursive: true, force: true });
    return;
  }
  await rm(partialManifest, { force: true });
  await rm(staging, { recursive: true, force: true });
  const ours = (await dataFilesOf(folder).catch(() => [])).filter((path) => basename(path).startsWith(`part-${id}`));
  await removeFiles(folder, ours).catch(() => undefined);
}

/** The first export into a link of the layout before partitions: the new folder takes the link's place. */
async function replaceLink(dir: string, folder: string): Promise<void> {
  await rm(dir, { force: true });
  await rename(folder, dir);
  await fsyncPath(dirname(dir));
  await rm(legacySnapshotStoreOf(dir), { recursive: true, force: true });
}

/** The export's figures: what a monitor reads with --json, and the lines a person reads. */
export function snapshotSummary(written: SnapshotExport) {
  const { relations } = written.manifest;
  return {
    to: written.to,
    schemaVersion: written.manifest.schemaVersion,
    exportedAt: written.manifest.exportedAt,
    tables: relations.filter((relation) => relation.kind === 'table').length,
    views: relations.filter((relation) => relation.kind === 'view').length,
    partitionsWritten: written.partitionsWritten,
    partitionsKept: written.partitionsKept,
    rows: Object.fromEntries(
      relations.filter((relation) => relation.kind === 'table').map((relation) => [relation.name, relation.rows]),
    ),
  };
}
