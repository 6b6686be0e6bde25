import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { ProductError } from '../errors/product-error.js';

/**
 * A Parquet snapshot of the warehouse, for readers that must not wait for the warehouse's one writer.
 *
 * Layout, for `export --to DIR` (docs/snapshot.md): `DIR` is a plain folder, a Hive-partitioned dataset.
 * - `DIR/<table>/carrier=<carrier>/month=<YYYY-MM>/part-<export>-<n>.parquet` for a large table: its rows
 *   of one carrier whose partitioning column (see snapshot-partitions.ts) falls in that carrier month;
 *   the files hold every column but `carrier`, which the path holds.
 * - `DIR/<table>/part-<export>.parquet` for a small table: all its rows.
 * - A view has no file: the manifest keeps its statement, which a reader runs over the tables.
 * - `DIR/manifest.json` names the files of each relation; it is replaced by a rename, so parcel-recon's
 *   readers see one whole snapshot, the old or the new. An export writes new files under new names,
 *   switches the manifest, and only then removes the files it superseded.
 * - `DIR/manifest.json.partial-<pid>` and `DIR/.export-<pid>` are an export under way; what a killed
 *   export left (them, and files no manifest names) is removed by the next.
 */

export const MANIFEST_FILE = 'manifest.json';
/** The manifest's `format`: a reader refuses a snapshot of a layout it does not know. */
export const SNAPSHOT_FORMAT = 2;
/** The name Hive, Spark and DuckDB give the folder of a partition whose value is NULL. */
export const NULL_PARTITION = '__HIVE_DEFAULT_PARTITION__';

const ColumnSchema = z.object({ name: z.string(), type: z.string() });

/** A path inside the snapshot folder, relative to it. */
const SnapshotPathSchema = z
  .string()
  .min(1)
  .refine((path) => !isAbsolute(path) && !path.split(/[/\\]/).includes('..'), 'a path inside the snapshot');

const SnapshotFileSchema = z.object({ path: SnapshotPathSchema, rows: z.number().int().min(0) });

const SnapshotPartitionSchema = z.object({
  /** `carrier=<c>/month=<m>` for a partitioned relation, '' for one that is not. */
  key: z.string(),
  rows: z.number().int().min(0),
  /** What the rows came to when they were written (count and hash): an export rewrites a partition whose rows differ. */
  fingerprint: z.string(),
  files: z.array(SnapshotFileSchema),
  /**
   * The least and greatest value of the relation's `spannedBy` column among the rows, in microseconds
   * since the epoch; absent when a row has none (or the partition was written before spans).
   */
  span: z.object({ min: z.number().int(), max: z.number().int() }).optional(),
});

const SnapshotRelationSchema = z.object({
  name: z.string().min(1),
  kind: z.enum(['table', 'view']),
  /** The column whose carrier month places a row, null when the relation is one file or a view. */
  partitionedBy: z.string().nullable(),
  /** The column of the partitions' spans (see snapshot-partitions.ts), absent for a relation without. */
  spannedBy: z.string().optional(),
  /** A table's rows; null for a view, whose rows a reader computes. */
  rows: z.number().int().min(0).nullable(),
  /** A view's statement, as the warehouse has it: a reader makes the view over the snapshot's tables. */
  definition: z.string().nullable(),
  columns: z.array(ColumnSchema),
  partitions: z.array(SnapshotPartitionSchema),
});

export const SnapshotManifestSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  /** The warehouse's schema version (its newest `schema_migrations` row). */
  schemaVersion: z.number().int().nullable(),
  exportedAt: z.string(),
  /**
   * The sequence number of the partition-change ledger the snapshot is current to: the next export
   * rewrites the partitions changed after it. Absent from a snapshot written before the ledger.
   */
  changeSequence: z.number().int().min(0).optional(),
  relations: z.array(SnapshotRelationSchema),
});

export type SnapshotFile = z.output<typeof SnapshotFileSchema>;
export type SnapshotPartition = z.output<typeof SnapshotPartitionSchema>;
export type SnapshotRelation = z.output<typeof SnapshotRelationSchema>;
export type SnapshotManifest = z.output<typeof SnapshotManifestSchema>;

/** The snapshot's path is unusable: nothing there for a reader, or a file or folder an export must not replace. */
export class SnapshotError extends ProductError {
  constructor(message: string, code: 'SNAPSHOT_NOT_FOUND' | 'SNAPSHOT_PATH_TAKEN', options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** The folder the snapshots of the earlier layout lived in, beside `DIR` (which was a link into it). */
export function legacySnapshotStoreOf(dir: string): string {
  return `${resolve(dir)}.snapshots`;
}

/** Every file a manifest names, relative to the snapshot folder. */
export function filesOfManifest(manifest: SnapshotManifest): string[] {
  return manifest.relations.flatMap((relation) =>
    relation.partitions.flatMap((partition) => partition.files.map((file) => file.path)),
  );
}

/** The manifest of the snapshot folder `folder`, or the reason there is none, naming the folder as `shownAs`. */
export async function readManifest(folder: string, shownAs = folder): Promise<SnapshotManifest> {
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch (error) {
    throw new SnapshotError(
      `no snapshot at ${shownAs} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      'SNAPSHOT_NOT_FOUND',
      { cause: error },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SnapshotError(`no snapshot at ${shownAs}: its ${MANIFEST_FILE} is not JSON`, 'SNAPSHOT_NOT_FOUND', {
      cause: error,
    });
  }
  const manifest = SnapshotManifestSchema.safeParse(value);
  if (!manifest.success)
    throw new SnapshotError(
      `no snapshot at ${shownAs}: its ${MANIFEST_FILE} is not one this parcel-recon writes (export it again)`,
      'SNAPSHOT_NOT_FOUND',
    );
  return manifest.data;
}

/** The snapshot `dir` names, its manifest read once, so that an export while it is read changes nothing it reads. */
export async function resolveSnapshot(dir: string): Promise<{ folder: string; manifest: SnapshotManifest }> {
  let folder: string;
  try {
    folder = await realpath(dir);
  } catch (error) {
    throw new SnapshotError(
      `no snapshot at ${dir} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      'SNAPSHOT_NOT_FOUND',
      { cause: error },
    );
  }
  return { folder, manifest: await readManifest(folder, dir) };
}
