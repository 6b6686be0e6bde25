import { randomUUID } from 'node:crypto';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes gathered before a write: few system calls, bounded memory whatever the batch size. */
const WRITE_BUFFER_BYTES = 1024 * 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_BYTES_PER_CHAR = 3;

/** NDJSON files in a spool directory, which DuckDB reads with `read_json(..., format = 'newline_delimited')`. */
export interface NdjsonSpool {
  /** Writes `lines` (each one JSON text without a newline) as a new file; returns its path. */
  write(lines: Iterable<string>): Promise<string>;
}

/**
 * Runs `work` with a spool in `spoolDir`, then deletes the files it wrote, whatever happened. Bulk
 * rows enter the warehouse this way: one file, one `read_json` statement.
 */
export async function withNdjsonSpool<T>(spoolDir: string, label: string, work: (spool: NdjsonSpool) => Promise<T>): Promise<T> {
  await mkdir(spoolDir, { recursive: true });
  const written: string[] = [];
  const spool: NdjsonSpool = {
    async write(lines) {
      const path = join(spoolDir, `${label}-${process.pid}-${randomUUID()}.ndjson`);
      written.push(path);
      await writeLines(path, lines);
      return path;
    },
  };
  try {
    return await work(spool);
  } finally {
    await Promise.all(written.map((path) => rm(path, { force: true })));
  }
}

/**
 * Encodes the lines straight into one reused buffer: joining them into a string first and encoding
 * that took twice as long (the Vietnamese text makes V8 strings two-byte).
 */
async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const file = await open(path, 'wx');
  try {
    const buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
    let used = 0;
    for (const line of lines) {
      const worstCase = line.length * MAX_UTF8_BYTES_PER_CHAR + 1;
      if (used + worstCase > buffer.length && used > 0) {
        await file.write(buffer, 0, used);
        used = 0;
      }
      if (worstCase > buffer.length) {
        await file.write(`${line}\n`);
        continue;
      }
      used += buffer.write(line, used, 'utf8');
      buffer[used++] = 0x0a;
    }
    if (used > 0) await file.write(buffer, 0, used);
  } finally {
    await file.close();
  }
}
