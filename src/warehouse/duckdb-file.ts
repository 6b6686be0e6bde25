import { open } from 'node:fs/promises';

/** DuckDB's main header starts after an 8-byte checksum with these magic bytes. */
const MAGIC = Buffer.from('DUCK');
const MAGIC_OFFSET = 8;

/**
 * Whether the file at `path` is a DuckDB database, by its header. DuckDB opens a file it does not
 * recognise as a database but as data (a CSV, Parquet or JSON file, an empty file) as an in-memory
 * database with a view over it, so whatever is written there would be lost without a word.
 */
export async function isDuckDbFile(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const header = Buffer.alloc(MAGIC_OFFSET + MAGIC.length);
    const { bytesRead } = await file.read(header, 0, header.length, 0);
    return bytesRead === header.length && header.subarray(MAGIC_OFFSET).equals(MAGIC);
  } finally {
    await file.close();
  }
}
