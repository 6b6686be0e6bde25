import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { type DuckDBConnection, DuckDBInstance, type DuckDBResultReader } from '@duckdb/node-api';
import { Parser } from 'csv-parse';
import type { QueryArrayResult } from 'pg';
import { ProductError } from '../errors/product-error.js';
import { confineConnection } from '../warehouse/duckdb-confinement.js';
import { firstLineOf } from '../warehouse/warehouse-errors.js';

/** Where the partner's own records come from: a CSV file, or a query on a DuckDB file or a PostgreSQL server. */
export type PartnerRecordsSource =
  | { readonly kind: 'csv'; readonly file: string }
  | { readonly kind: 'duckdb'; readonly file: string; readonly query: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly query: string };

/** A problem with the partner's records as a whole (file missing, no order_code column, query failed). */
export class PartnerRecordsError extends ProductError {
  constructor(message: string) {
    super('PARTNER_RECORDS_UNREADABLE', message);
  }
}

/** The temporary table the partner's records are loaded into, one row per line, every value as text. */
export const PARTNER_RECORDS = 'partner_records';

/** The columns read from the partner's records; order_code is required, the others optional. */
const FIELDS = ['order_code', 'expected_status', 'invoiced_amount', 'cod_amount'] as const;
type Field = (typeof FIELDS)[number];
const ALIASES: Record<string, Field> = { ordercode: 'order_code' };

interface PartnerLine {
  readonly origin: string;
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

function lineOf(origin: string, positions: Map<Field, number>, values: readonly unknown[]): PartnerLine {
  const picked: Partial<Record<Field, string>> = {};
  for (const [field, index] of positions) {
    const value = values[index];
    if (value === null || value === undefined) continue;
    const text = String(value).trim();
    if (text !== '') picked[field] = text;
  }
  return { origin, values: picked };
}

/**
 * csv-parse's stream, each record pushed with the line it ends on (from the parser's own `info`, as
 * it stands when the record is pushed): the same line number as the `info` option gives, without the
 * two objects that option builds per record, which cost more than parsing the record.
 */
class LineNumberedParser extends Parser {
  override push(record: unknown): boolean {
    return super.push(record === null ? null : { record, line: this.info.lines });
  }
}

async function* csvLines(file: string): AsyncGenerator<PartnerLine> {
  try {
    await access(file);
  } catch {
    throw new PartnerRecordsError(`partner records ${file}: no such file`);
  }
  if (await isPlainCsv(file)) {
    yield* plainCsvLines(file);
    return;
  }
  const parser = createReadStream(file).pipe(
    new LineNumberedParser({ bom: true, delimiter: [',', ';'], relax_column_count: true, skip_empty_lines: true }),
  );
  let positions: Map<Field, number> | undefined;
  try {
    for await (const { record, line } of parser as AsyncIterable<{ record: string[]; line: number }>) {
      if (positions === undefined) {
        positions = fieldPositions(record, `partner records ${file}`);
        continue;
      }
      yield lineOf(`${file}:${line}`, positions, record);
    }
  } catch (error) {
    if (error instanceof PartnerRecordsError) throw error;
    throw new PartnerRecordsError(`partner records ${file}: ${firstLineOf(error)}`);
  }
}

/**
 * A file without a quote or a carriage return: csv-parse, as csvLines sets it, reads each line as one
 * record split at every `,` and `;`, so splitting the lines in JavaScript gives the same records,
 * several times faster, which matters for the millions of lines of a year's invoices.
 */
async function isPlainCsv(file: string): Promise<boolean> {
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>)
    if (chunk.includes(QUOTE) || chunk.includes(CARRIAGE_RETURN)) return false;
  return true;
}

const QUOTE = 0x22;
const CARRIAGE_RETURN = 0x0d;
const BYTE_ORDER_MARK = '\uFEFF';

/** csvLines for a plain file (isPlainCsv): the same records, line numbers, header rules and byte-order mark. */
async function* plainCsvLines(file: string): AsyncGenerator<PartnerLine> {
  const decoder = new StringDecoder('utf8');
  let positions: Map<Field, number> | undefined;
  let lineNo = 0;
  let rest = '';
  const recordOf = (line: string): PartnerLine | undefined => {
    lineNo++;
    const text = lineNo === 1 && line.startsWith(BYTE_ORDER_MARK) ? line.slice(1) : line;
    // Empty lines are skipped, and counted.
    if (text === '') return undefined;
    const values = text.split(/[,;]/);
    if (positions === undefined) {
      positions = fieldPositions(values, `partner records ${file}`);
      return undefined;
    }
    return lineOf(`${file}:${lineNo}`, positions, values);
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    const lines = (rest + decoder.write(chunk)).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const record = recordOf(line);
      if (record !== undefined) yield record;
    }
  }
  const last = recordOf(rest + decoder.end());
  if (last !== undefined) yield last;
}

async function* duckdbLines(file: string, query: string): AsyncGenerator<PartnerLine> {
  let instance: DuckDBInstance;
  try {
    await access(file);
    instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  } catch (error) {
    throw new PartnerRecordsError(`cannot open DuckDB file ${file}: ${firstLineOf(error)}`);
  }
  const connection = await instance.connect();
  try {
    // The query is to read this file only: not the keys file beside it, nor anything over the network.
    await confineConnection(connection, []);
    let reader: DuckDBResultReader;
    try {
      reader = await connection.runAndReadAll(query);
    } catch (error) {
      throw new PartnerRecordsError(`DuckDB query failed: ${firstLineOf(error)}`);
    }
    const positions = fieldPositions(reader.columnNames(), 'the DuckDB query');
    let row = 0;
    for (const values of reader.getRows())
      yield lineOf(
        `duckdb row ${++row}`,
        positions,
        values.map((v) => (v === null ? null : String(v))),
      );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function* postgresLines(url: string, query: string): AsyncGenerator<PartnerLine> {
  const password = (() => {
    try {
      return decodeURIComponent(new URL(url).password);
    } catch {
      throw new PartnerRecordsError('not a PostgreSQL URL: expected postgres://user@host:port/database');
    }
  })();
  const masked = (error: unknown) =>
    password === '' ? firstLineOf(error) : firstLineOf(error).split(password).join('***');
  // Every value as PostgreSQL spells it: a numeric keeps its exact digits.
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 15_000,
    types: { getTypeParser: () => (text: string) => text },
  });
  client.on('error', () => {});
  try {
    try {
      await client.connect();
    } catch (error) {
      throw new PartnerRecordsError(`cannot connect to PostgreSQL: ${masked(error)}`);
    }
    let result: QueryArrayResult;
    try {
      result = await client.query({ text: query, rowMode: 'array' });
    } catch (error) {
      throw new PartnerRecordsError(`PostgreSQL query failed: ${masked(error)}`);
    }
    const positions = fieldPositions(
      result.fields.map((f) => f.name),
      'the PostgreSQL query',
    );
    let row = 0;
    for (const values of result.rows as unknown[][]) yield lineOf(`postgres row ${++row}`, positions, values);
  } finally {
    await client.end().catch(() => {});
  }
}

function linesOf(source: PartnerRecordsSource): AsyncGenerator<PartnerLine> {
  switch (source.kind) {
    case 'csv':
      return csvLines(source.file);
    case 'duckdb':
      return duckdbLines(source.file, source.query);
    case 'postgres':
      return postgresLines(source.url, source.query);
  }
}

/**
 * Loads the partner's records into the temporary table `partner_records` (line_no, origin and the
 * four fields as text, null when absent) through DuckDB's appender, replacing any earlier load; works
 * on a read-only warehouse. Returns the number of lines read.
 */
export async function loadPartnerRecords(connection: DuckDBConnection, source: PartnerRecordsSource): Promise<number> {
  await connection.run(
    `CREATE OR REPLACE TEMP TABLE ${PARTNER_RECORDS} (line_no BIGINT, origin VARCHAR, ${FIELDS.map((f) => `${f} VARCHAR`).join(', ')})`,
  );
  const appender = await connection.createAppender(PARTNER_RECORDS, 'main', 'temp');
  let count = 0;
  try {
    for await (const line of linesOf(source)) {
      appender.appendBigInt(BigInt(++count));
      appender.appendVarchar(line.origin);
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
