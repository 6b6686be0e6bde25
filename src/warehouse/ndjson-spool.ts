import { randomUUID } from 'node:crypto';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonFields, JsonStructure } from '../carriers/answer-sql.js';
import { sqlText } from './sql-literals.js';

/** Bytes gathered before a write: few system calls, bounded memory whatever the batch size. */
const WRITE_BUFFER_BYTES = 1024 * 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_BYTES_PER_CHAR = 3;

/** An NDJSON file written to a spool, and the UTF-8 length of its longest line (which sizes DuckDB's line reader). */
export interface SpoolFile {
  readonly path: string;
  readonly longestLineBytes: number;
}

/** NDJSON files in a spool directory, which DuckDB reads with spoolFileRows. */
export interface NdjsonSpool {
  /** Writes `lines` (each one JSON text without a newline) as a new file. */
  write(lines: Iterable<string>): Promise<SpoolFile>;
}

/**
 * Runs `work` with a spool in `spoolDir`, then deletes the files it wrote, whatever happened. Bulk
 * rows enter the warehouse this way: one file, one statement (spoolFileRows).
 */
export async function withNdjsonSpool<T>(
  spoolDir: string,
  label: string,
  work: (spool: NdjsonSpool) => Promise<T>,
): Promise<T> {
  await mkdir(spoolDir, { recursive: true });
  const written: string[] = [];
  const spool: NdjsonSpool = {
    async write(lines) {
      const path = join(spoolDir, `${label}-${process.pid}-${randomUUID()}.ndjson`);
      written.push(path);
      return { path, longestLineBytes: await writeLines(path, lines) };
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
 * that is slower (the Vietnamese text makes V8 strings two-byte). Returns the longest line's length
 * in bytes.
 */
async function writeLines(path: string, lines: Iterable<string>): Promise<number> {
  const file = await open(path, 'wx');
  let longest = 0;
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
        longest = Math.max(longest, Buffer.byteLength(line, 'utf8'));
        await file.write(`${line}\n`);
        continue;
      }
      const lineBytes = buffer.write(line, used, 'utf8');
      longest = Math.max(longest, lineBytes);
      used += lineBytes;
      buffer[used++] = 0x0a;
    }
    if (used > 0) await file.write(buffer, 0, used);
  } finally {
    await file.close();
  }
  return longest;
}

/** The smallest buffer of DuckDB's line reader: a spool file of short lines reads in a few. */
const MIN_LINE_READER_BYTES = 1024 * 1024;

/**
 * Which DuckDB reader reads a spool file: read_json, or its lines decoded by json_transform (see
 * spoolFileRows). Both give the same rows.
 */
export type SpoolReader = 'json' | 'lines';

/**
 * read_json holds a buffer of at least 32 MiB of DuckDB's memory limit, and the rows it builds beside
 * it: below this limit (`track` gives DuckDB 64 MB) the line reader is used.
 */
const JSON_READER_MIN_MEMORY_BYTES = 256 * 1024 ** 2;

const SIZE_UNITS: Readonly<Record<string, number>> = {
  bytes: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  tb: 1000 ** 4,
};

/**
 * The reader for spool files under a memory limit as DuckDB shows it (`current_setting('memory_limit')`,
 * e.g. `488.2 MiB`): read_json, which decodes a file about twice as fast, where the limit leaves it
 * room; the line reader otherwise, or when the limit cannot be read.
 */
export function spoolReaderFor(memoryLimit: string): SpoolReader {
  const match = /^([\d.]+)\s*([a-z]+)$/i.exec(memoryLimit.trim());
  const unit = match === null ? undefined : SIZE_UNITS[match[2]!.toLowerCase()];
  if (match === null || unit === undefined) return 'lines';
  return Number(match[1]) * unit >= JSON_READER_MIN_MEMORY_BYTES ? 'json' : 'lines';
}

/**
 * The rows of a spool file as SQL, one column per field of `fields` (extra fields in a line are
 * ignored, missing ones are null, and so is a value of another type than its field's); `fileSql` is
 * the file's path as SQL text, e.g. a parameter `$file`.
 *
 * By default the file is read as lines by read_csv (with a separator and quote that JSON text never
 * holds raw) and each line decoded by json_transform, rather than by read_json: read_json reserves a
 * 32 MiB buffer of DuckDB's memory limit whatever the file's size (its minimum), a large part of what
 * `track` gives DuckDB, while a batch's file needs a few. The line reader's buffer is sized to the
 * longest line: read_csv refuses a line longer than its limit, and drops one at the end of a file.
 * With `reader` 'json' (spoolReaderFor) the file is read by read_json.
 */
export function spoolFileRows(
  fileSql: string,
  file: Pick<SpoolFile, 'longestLineBytes'>,
  fields: JsonFields,
  reader: SpoolReader = 'lines',
): string {
  const maxLineBytes = Math.max(MIN_LINE_READER_BYTES, file.longestLineBytes + 2);
  if (reader === 'json')
    return `read_json(${fileSql}, columns = {${jsonReaderColumns(fields)}}, format = 'newline_delimited', ignore_errors = true, maximum_object_size = ${maxLineBytes})`;
  return `(SELECT unnest(json_transform(line, ${sqlText(JSON.stringify(fields))})) FROM ${spoolFileLines(fileSql, maxLineBytes)})`;
}

/** read_json's `columns`: each field with its SQL type. */
function jsonReaderColumns(fields: JsonFields): string {
  return Object.entries(fields)
    .map(([name, structure]) => `${sqlText(name)}: ${sqlText(sqlTypeOf(structure))}`)
    .join(', ');
}

function sqlTypeOf(structure: JsonStructure): string {
  if (typeof structure === 'string') return structure;
  if (Array.isArray(structure)) return `${sqlTypeOf(structure[0])}[]`;
  return `STRUCT(${Object.entries(structure as JsonFields)
    .map(([name, field]) => `"${name}" ${sqlTypeOf(field)}`)
    .join(', ')})`;
}

function spoolFileLines(fileSql: string, maxLineBytes: number): string {
  return `read_csv(${fileSql}, columns = {'line': 'VARCHAR'}, header = false, auto_detect = false, delim = E'\\x01', quote = '', escape = '',
    max_line_size = ${maxLineBytes}, buffer_size = ${2 * maxLineBytes})`;
}
