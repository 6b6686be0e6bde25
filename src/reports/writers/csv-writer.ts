import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { type DuckDBConnection, DuckDBTypeId } from '@duckdb/node-api';
import { stringify } from 'csv-stringify/sync';
import { formulaSafeTextSql } from '../../warehouse/formula-safe-text.js';
import { sqlName } from '../../warehouse/sql-literals.js';
import { csvLines } from './csv-lines.js';
import type { CsvStringifyPool } from './csv-stringify-pool.js';
import { narrowDecimals } from './narrow-decimals.js';

/** The query with every column cast to text, as DuckDB spells it (exact money, UTC times); and its column names. */
export async function asTextQuery(
  connection: DuckDBConnection,
  query: string,
): Promise<{ readonly columns: string[]; readonly query: string }> {
  const columns = (await connection.runAndReadAll(`SELECT * FROM (${query}) LIMIT 0`)).columnNames();
  const asText = columns.map((c) => `CAST(${sqlName(c)} AS VARCHAR) AS ${sqlName(c)}`).join(', ');
  return { columns, query: `SELECT ${asText} FROM (${query})` };
}

/**
 * The query's rows as one column, each row the JSON array of its values cast to text (null stays
 * null): one string per row to bring into JavaScript instead of one per value, which costs several
 * times more in the DuckDB client than JSON.parse does. Text columns are made formula-safe; numbers,
 * times and the rest keep DuckDB's spelling.
 */
async function asJsonRowsQuery(
  connection: DuckDBConnection,
  query: string,
): Promise<{ readonly columns: string[]; readonly query: string }> {
  const narrowed = await narrowDecimals(connection, query);
  const values = narrowed.columns
    .map((c, i) =>
      narrowed.types[i]!.typeId === DuckDBTypeId.VARCHAR
        ? formulaSafeTextSql(sqlName(c))
        : `CAST(${sqlName(c)} AS VARCHAR)`,
    )
    .join(', ');
  return { columns: narrowed.columns, query: `SELECT to_json([${values}]) AS row_values FROM (${narrowed.query})` };
}

/**
 * Writes a query's rows as CSV with csv-stringify: UTF-8 with a byte order mark (so spreadsheets
 * read Vietnamese text as UTF-8), a header row, every value as DuckDB spells it as text (exact money,
 * UTC times), empty for null, a text that would start a formula after a `'`. Streams chunk by chunk; a table of more than one chunk is stringified
 * in `pool`'s worker threads, written in order. Returns the number of rows.
 */
export async function writeCsv(
  connection: DuckDBConnection,
  query: string,
  path: string,
  pool: CsvStringifyPool,
): Promise<number> {
  const json = await asJsonRowsQuery(connection, query);
  const result = await connection.stream(json.query);
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const inFlight: Promise<string>[] = [];
  // The first batch waits for a second one: a table of one chunk is stringified here, without workers.
  let first: string | undefined;
  let batches = 0;
  let rows = 0;
  try {
    await write(stringify([], { bom: true, header: true, columns: json.columns }));
    for (
      let chunk = await result.fetchChunk();
      chunk !== null && chunk.rowCount > 0;
      chunk = await result.fetchChunk()
    ) {
      rows += chunk.rowCount;
      const batch = `[${(chunk.getColumnValues(0) as string[]).join(',')}]`;
      if (batches++ === 0) {
        first = batch;
        continue;
      }
      if (first !== undefined) {
        inFlight.push(pool.stringify(first));
        first = undefined;
      }
      inFlight.push(pool.stringify(batch));
      while (inFlight.length >= pool.depth) await write(await inFlight.shift()!);
    }
    if (first !== undefined) await write(csvLines(JSON.parse(first) as (string | null)[][]));
    while (inFlight.length > 0) await write(await inFlight.shift()!);
  } finally {
    // A failed batch leaves the others to settle unread.
    for (const batch of inFlight) batch.catch(() => {});
    out.end();
    await once(out, 'close');
  }
  return rows;
}
