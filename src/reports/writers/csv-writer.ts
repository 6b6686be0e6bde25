import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { DuckDBConnection } from '@duckdb/node-api';
import { stringify } from 'csv-stringify/sync';

/** The query with every column cast to text, as DuckDB spells it (exact money, UTC times); and its column names. */
export async function asTextQuery(connection: DuckDBConnection, query: string): Promise<{ readonly columns: string[]; readonly query: string }> {
  const columns = (await connection.runAndReadAll(`SELECT * FROM (${query}) LIMIT 0`)).columnNames();
  const asText = columns.map((c) => `CAST("${c.replaceAll('"', '""')}" AS VARCHAR) AS "${c.replaceAll('"', '""')}"`).join(', ');
  return { columns, query: `SELECT ${asText} FROM (${query})` };
}

/**
 * Writes a query's rows as CSV with csv-stringify: UTF-8 with a byte order mark (so spreadsheets
 * read Vietnamese text as UTF-8), a header row, every value as DuckDB spells it as text (exact money,
 * UTC times), empty for null. Streams chunk by chunk; returns the number of rows.
 */
export async function writeCsv(connection: DuckDBConnection, query: string, path: string): Promise<number> {
  const text = await asTextQuery(connection, query);
  const columns = text.columns;
  const result = await connection.stream(text.query);
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  let rows = 0;
  try {
    await write(stringify([], { bom: true, header: true, columns }));
    for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const records = chunk.getRows() as (string | null)[][];
      rows += records.length;
      await write(stringify(records));
    }
  } finally {
    out.end();
    await once(out, 'close');
  }
  return rows;
}
