import { existsSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fsyncPath } from './durable-files.js';
import { sqlName, sqlText } from './sql-literals.js';
import type { Warehouse } from './warehouse.js';
import { firstLineOf, WarehouseError } from './warehouse-errors.js';

/** The new file a compaction writes next to the warehouse before it takes the warehouse's name. */
export function compactionFileOf(warehousePath: string): string {
  return `${resolve(warehousePath)}.compacting`;
}

const COMPACTED = 'parcel_recon_compacted';

export interface CompactionResult {
  /** The warehouse file and its write-ahead log before, and the compacted file. */
  readonly bytesBefore: number;
  readonly bytesAfter: number;
}

async function sizeOf(path: string): Promise<number> {
  return (await stat(path).catch(() => undefined))?.size ?? 0;
}

async function removeCompactionFile(target: string): Promise<void> {
  await rm(target, { force: true });
  await rm(`${target}.wal`, { force: true });
}

/**
 * Rewrites the warehouse into a new file (DuckDB's COPY FROM DATABASE: every table, index, sequence,
 * view and macro, and the schema version's rows) and swaps it in with a rename, then closes
 * `warehouse`: DuckDB never gives a deleted row's space back to the file itself. The warehouse stays
 * open (and locked) until the new file has its name, so no writer gets in between; the old file is
 * untouched until the rename, so a kill at any point leaves a whole warehouse under the name. A
 * compaction file a killed compaction left is removed first.
 */
export async function compactAndClose(warehouse: Warehouse): Promise<CompactionResult> {
  try {
    const path = resolve(warehouse.path);
    const target = compactionFileOf(path);
    await removeCompactionFile(target);
    await warehouse.run('CHECKPOINT');
    const bytesBefore = (await sizeOf(path)) + (await sizeOf(`${path}.wal`));
    const reader = await warehouse.readAll('SELECT current_database() AS name');
    const source = sqlName(String(reader.getRowObjectsJS()[0]?.name));
    try {
      await warehouse.run(`ATTACH ${sqlText(target)} AS ${COMPACTED}`);
      await warehouse.run(`COPY FROM DATABASE ${source} TO ${COMPACTED}`);
      await warehouse.run(`CHECKPOINT ${COMPACTED}`);
    } catch (error) {
      await warehouse.run(`DETACH DATABASE IF EXISTS ${COMPACTED}`).catch(() => undefined);
      await removeCompactionFile(target);
      throw new WarehouseError(`cannot compact warehouse ${warehouse.path}: ${firstLineOf(error)}`, { cause: error });
    }
    await warehouse.run(`DETACH DATABASE ${COMPACTED}`);
    await fsyncPath(target);
    // A write-ahead log left beside the name would be replayed into the new file.
    await warehouse.run('CHECKPOINT');
    if (existsSync(`${path}.wal`))
      throw new WarehouseError(`cannot compact warehouse ${warehouse.path}: its write-ahead log is still in use`);
    await rename(target, path);
    await fsyncPath(dirname(path));
    return { bytesBefore, bytesAfter: await sizeOf(path) };
  } finally {
    await warehouse.close();
  }
}
