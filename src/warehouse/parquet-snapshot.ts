import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { ProductError } from '../errors/product-error.js';

/**
 * A Parquet snapshot of the warehouse, for readers that must not wait for the warehouse's one writer.
 *
 * Layout, for `export --to DIR`:
 * - `DIR` is a symbolic link to `DIR.snapshots/<id>/`, the current snapshot: one Parquet file per
 *   table and view of the warehouse and `manifest.json`. A new snapshot is published by renaming a
 *   new link over `DIR`, which the system does atomically: a reader resolves `DIR` to a whole
 *   snapshot, the old or the new one, never to half of one.
 * - `DIR.snapshots/<id>.partial-<pid>/` is an export under way, and `DIR.snapshots/link.partial-<pid>`
 *   the link it is about to rename over `DIR`; what a killed export left is removed by the next.
 * - The snapshot the link pointed to before is kept until the next export, so a reader that resolved
 *   the link just before the swap still finds its files.
 */

export const MANIFEST_FILE = 'manifest.json';
/** The manifest's `format`: a reader refuses a snapshot of a layout it does not know. */
export const SNAPSHOT_FORMAT = 1;

const ColumnSchema = z.object({ name: z.string(), type: z.string() });

const SnapshotRelationSchema = z.object({
  name: z.string().min(1),
  kind: z.enum(['table', 'view']),
  file: z.string().regex(/^[^/\\]+\.parquet$/),
  rows: z.number().int().min(0),
  columns: z.array(ColumnSchema),
});

export const SnapshotManifestSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  /** The warehouse's schema version (its newest `schema_migrations` row). */
  schemaVersion: z.number().int().nullable(),
  exportedAt: z.string(),
  relations: z.array(SnapshotRelationSchema),
});

export type SnapshotRelation = z.output<typeof SnapshotRelationSchema>;
export type SnapshotManifest = z.output<typeof SnapshotManifestSchema>;

/** The snapshot's path is unusable: nothing there for a reader, or a file or folder an export must not replace. */
export class SnapshotError extends ProductError {
  constructor(message: string, code: 'SNAPSHOT_NOT_FOUND' | 'SNAPSHOT_PATH_TAKEN', options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** The folder that holds the snapshots `DIR` links to, beside it. */
export function snapshotStoreOf(dir: string): string {
  return `${resolve(dir)}.snapshots`;
}

/** The link's target for snapshot `id`: relative to the link's own folder, so the whole can be moved. */
export function linkTargetOf(dir: string, id: string): string {
  return join(`${basename(resolve(dir))}.snapshots`, id);
}

/** The snapshot folder's name `dir` links to, when it is such a link. */
export function snapshotIdOfTarget(dir: string, target: string): string | undefined {
  const prefix = `${basename(resolve(dir))}.snapshots/`;
  return target.startsWith(prefix) && !target.slice(prefix.length).includes('/')
    ? target.slice(prefix.length)
    : undefined;
}

/** The snapshot `dir` names, resolved once so that a swap while it is read changes nothing, and its manifest. */
export async function resolveSnapshot(dir: string): Promise<{ folder: string; manifest: SnapshotManifest }> {
  let folder: string;
  let text: string;
  try {
    folder = await realpath(dir);
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch (error) {
    throw new SnapshotError(
      `no snapshot at ${dir} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      'SNAPSHOT_NOT_FOUND',
      { cause: error },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SnapshotError(`no snapshot at ${dir}: its ${MANIFEST_FILE} is not JSON`, 'SNAPSHOT_NOT_FOUND', {
      cause: error,
    });
  }
  const manifest = SnapshotManifestSchema.safeParse(value);
  if (!manifest.success)
    throw new SnapshotError(
      `no snapshot at ${dir}: its ${MANIFEST_FILE} is not one this parcel-recon writes`,
      'SNAPSHOT_NOT_FOUND',
    );
  return { folder, manifest: manifest.data };
}

/** The parent folder a rename of the link must be made durable in. */
export function linkFolderOf(dir: string): string {
  return dirname(resolve(dir));
}
