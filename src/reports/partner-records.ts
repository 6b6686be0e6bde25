import type { DuckDBConnection } from '@duckdb/node-api';
import { ProductError } from '../errors/product-error.js';
import { lenientCsvRows } from '../sources/csv-lines.js';
import { SourceError } from '../sources/order-code-source.js';
import { isWorkbook, type TableSource, tableName, tableRows } from '../sources/table-rows.js';
import { sqlName, sqlText } from '../warehouse/sql-literals.js';
import { type PlainCsvShape, plainCsvShape } from './csv-file-shape.js';

/**
 * Where the partner's own records come from: a CSV file (read by DuckDB, or line by line with either
 * delimiter), or any other source's rows: a `.xlsx` workbook, a query on DuckDB, PostgreSQL or MySQL.
 */
export type PartnerRecordsSource =
  | { readonly kind: 'csv'; readonly file: string }
  | Exclude<TableSource, { readonly kind: 'csv' | 'xlsx' }>
  | { readonly kind: 'xlsx'; readonly file: string; readonly sheet?: string | undefined };

/** A problem with the partner's records as a whole (file missing, no order_code column, query failed). */
export class PartnerRecordsError extends ProductError {
  constructor(message: string) {
    super('PARTNER_RECORDS_UNREADABLE', message);
  }
}

/**
 * The partner's records, one row per line (line_no, origin and the four fields as text, null when
 * absent): a temporary view over PARTNER_LINES, which keeps each line's number rather than its origin,
 * the same text on every line but the number, which would take the most room of a million lines.
 */
export const PARTNER_RECORDS = 'partner_records';
const PARTNER_LINES = 'partner_lines';

/** The columns read from the partner's records; order_code is required, the others optional. */
const FIELDS = ['order_code', 'expected_status', 'invoiced_amount', 'cod_amount'] as const;
type Field = (typeof FIELDS)[number];
const ALIASES: Record<string, Field> = { ordercode: 'order_code' };

interface PartnerLine {
  /** Its number in its source: the file's line (row of a sheet) it ends on, or the query's row. */
  readonly line: number;
  readonly values: Readonly<Partial<Record<Field, string>>>;
}

/** Which of the record columns a header has, by position. */
function fieldPositions(names: readonly string[], sourceName: string): Map<Field, number> {
  const positions = new Map<Field, number>();
  names.forEach((raw, index) => {
    const name = raw.trim().toLowerCase();
    const field = (FIELDS as readonly string[]).includes(name) ? (name as Field) : ALIASES[name];
    if (field !== undefined && !positions.has(field)) positions.set(field, index);
  });
  if (!positions.has('order_code')) {
    throw new PartnerRecordsError(
      `${sourceName} has no order_code column; its columns are ${names.map((n) => n.trim()).join(', ') || '(none)'}`,
    );
  }
  return positions;
}

function lineOf(line: number, positions: Map<Field, number>, values: readonly unknown[]): PartnerLine {
  const picked: Partial<Record<Field, string>> = {};
  for (const [field, index] of positions) {
    const value = values[index];
    if (value === null || value === undefined) continue;
    const text = String(value).trim();
    if (text !== '') picked[field] = text;
  }
  return { line, values: picked };
}

/**
 * The lines of the partner's records, streamed through the source's reader: a CSV read leniently
 * (either delimiter, rows of any length), a workbook's error cell read as its code, as the sheet's CSV
 * would hold it, a query's rows as they come.
 */
async function* linesOf(source: PartnerRecordsSource): AsyncGenerator<PartnerLine> {
  let positions = new Map<Field, number>();
  const isFile = source.kind === 'csv' || source.kind === 'xlsx';
  const sourceName = isFile ? `partner records ${source.file}` : tableName(source);
  const check = (names: readonly string[]) => {
    positions = fieldPositions(names, sourceName);
  };
  const rows =
    source.kind === 'csv'
      ? lenientCsvRows(source.file, check)
      : tableRows(source.kind === 'xlsx' ? { ...source, errorCells: 'text' } : source, check);
  try {
    for await (const item of rows) {
      // Neither reader rejects a row: a line without its values is a finding of the report.
      if (item.kind === 'row') yield lineOf(item.row.line, positions, item.row.values);
    }
  } catch (error) {
    // A file's messages start with its name.
    if (error instanceof SourceError)
      throw new PartnerRecordsError(isFile ? `partner records ${error.message}` : error.message);
    throw error;
  }
}

/** The partner's records in a file: a workbook when it ends in `.xlsx` (its first sheet, or `sheet`), else a CSV. */
export function partnerFile(file: string, sheet?: string): PartnerRecordsSource {
  return isWorkbook(file) ? { kind: 'xlsx', file, sheet } : { kind: 'csv', file };
}

/** The characters `String.prototype.trim` removes: ECMAScript's white space and line terminators. */
const TRIMMED =
  '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

/**
 * A text column trimmed as `String.prototype.trim` does, null when nothing is left, in a file with
 * `blanks`. DuckDB's trim() takes off spaces alone; trimming with a set of characters is slow, so a
 * value that starts and ends with a visible ASCII character is kept as it is.
 */
function trimmed(column: string, blanks: PlainCsvShape['blanks']): string {
  switch (blanks) {
    case 'none':
      return column;
    case 'spaces':
      return `nullif(trim(${column}), '')`;
    case 'any':
      return `CASE WHEN regexp_full_match(${column}, '[!-~](.*[!-~])?') THEN ${column} ELSE nullif(trim(${column}, ${sqlText(TRIMMED)}), '') END`;
  }
}

/** Where a source's lines are: its origin is this text and the line's number. */
function originPrefix(source: PartnerRecordsSource): string {
  switch (source.kind) {
    case 'csv':
    case 'xlsx':
      return `${source.file}:`;
    case 'duckdb':
      return 'duckdb row ';
    case 'postgres':
      return 'postgres row ';
    case 'mysql':
      return 'mysql row ';
  }
}

/** An empty PARTNER_LINES, and PARTNER_RECORDS over it naming each line's origin. */
async function createPartnerRecords(connection: DuckDBConnection, source: PartnerRecordsSource): Promise<void> {
  await connection.run(
    `CREATE OR REPLACE TEMP TABLE ${PARTNER_LINES} (line_no BIGINT, line BIGINT, ${FIELDS.map((f) => `${f} VARCHAR`).join(', ')})`,
  );
  await connection.run(
    `CREATE OR REPLACE TEMP VIEW ${PARTNER_RECORDS} AS
     SELECT line_no, ${sqlText(originPrefix(source))} || line AS origin, ${FIELDS.join(', ')} FROM ${PARTNER_LINES}`,
  );
}

/**
 * Loads a partner CSV into `partner_records` with DuckDB's own reader, when the file is one it reads
 * exactly as csv-parse does: every line one record (so a record's line is its index plus the header's),
 * no quote, one delimiter. Returns the number of lines read, or undefined (the records left empty) when
 * the file is not such a file or DuckDB cannot read it: the CSV parser then reads it and words its problems.
 */
export async function loadPartnerCsvWithDuckDb(
  connection: DuckDBConnection,
  file: string,
): Promise<number | undefined> {
  await createPartnerRecords(connection, { kind: 'csv', file });
  let shape: PlainCsvShape | undefined;
  try {
    shape = await plainCsvShape(file);
  } catch {
    return undefined;
  }
  if (shape === undefined) return undefined;
  // Every value as text, an empty one as null; rows in the file's order; short rows padded with nulls.
  const rows = `read_csv(${sqlText(file)}, header = false, all_varchar = true, delim = ${sqlText(shape.delimiter)},
    quote = '', escape = '', comment = '', skip = 0, null_padding = true,
    strict_mode = true)`;
  try {
    const header = await connection.runAndReadAll(`SELECT * FROM ${rows} LIMIT 1`);
    const names = header.getRows()[0]?.map((value) => (value === null ? '' : String(value)));
    if (names === undefined) return undefined;
    const positions = fieldPositions(names, `partner records ${file}`);
    const columns = header.columnNames();
    const values = FIELDS.map((field) => {
      const index = positions.get(field);
      return index === undefined ? 'NULL' : trimmed(sqlName(columns[index]!), shape.blanks);
    });
    const inserted = await connection.run(
      `INSERT INTO ${PARTNER_LINES}
       SELECT record - 1, record, ${values.join(', ')}
       FROM (SELECT row_number() OVER () AS record, * FROM ${rows}) WHERE record > 1`,
    );
    const count = Number(inserted.rowsChanged);
    if (count + 1 === shape.lines) return count;
  } catch {
    // Read again by the CSV parser below, whose messages are the ones a user sees.
  }
  await createPartnerRecords(connection, { kind: 'csv', file });
  return undefined;
}

/**
 * Loads the partner's records into the temporary view `partner_records` (line_no, origin and the
 * four fields as text, null when absent), replacing any earlier load; works on a read-only warehouse.
 * A CSV file is read by DuckDB when it reads it as the CSV parser would, else by the parser; the other
 * sources go through DuckDB's appender. Returns the number of lines read.
 */
export async function loadPartnerRecords(connection: DuckDBConnection, source: PartnerRecordsSource): Promise<number> {
  if (source.kind === 'csv') {
    const count = await loadPartnerCsvWithDuckDb(connection, source.file);
    if (count !== undefined) return count;
  } else await createPartnerRecords(connection, source);
  const appender = await connection.createAppender(PARTNER_LINES, 'main', 'temp');
  let count = 0;
  try {
    for await (const line of linesOf(source)) {
      appender.appendBigInt(BigInt(++count));
      appender.appendBigInt(BigInt(line.line));
      for (const field of FIELDS) {
        const value = line.values[field];
        if (value === undefined) appender.appendNull();
        else appender.appendVarchar(value);
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return count;
}
