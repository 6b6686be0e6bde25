import type { DuckDBConnection, DuckDBDataChunk, DuckDBResult } from '@duckdb/node-api';
import { confineConnection } from '../warehouse/duckdb-confinement.js';
import { DuckDBInstance } from '../warehouse/duckdb-library.js';
import { endStreamingQuery } from '../warehouse/streaming-query.js';
import { type OrderCodeSource, SourceError } from './order-code-source.js';
import { queryForDescription } from './query-description.js';
import { orderCodeItems, type QueryRow } from './source-rows.js';

/**
 * Order codes from a query over a DuckDB file, opened read-only (a missing file is an error, never
 * created). The result needs an `order_code` column and may have `account`; it is read chunk by chunk.
 */
export function duckdbSource(file: string, query: string): OrderCodeSource {
  return {
    description: `duckdb:${file}: ${queryForDescription(query)}`,
    items: () => orderCodeItems('the DuckDB query', (check) => duckdbQueryRows(file, query, check)),
  };
}

/**
 * The rows of a query over a DuckDB file, opened read-only (a missing file is an error, never
 * created), read chunk by chunk. `checkColumns` sees the column names before any row (and may throw).
 * Failures are SourceErrors.
 */
export async function* duckdbQueryRows(
  file: string,
  query: string,
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<QueryRow> {
  const instance = await failingAs(`cannot open DuckDB file ${file}`, () =>
    DuckDBInstance.create(file, { access_mode: 'READ_ONLY' }),
  );
  let connection: DuckDBConnection | undefined;
  let unfinished: DuckDBResult | undefined;
  try {
    const opened = await failingAs(`cannot open DuckDB file ${file}`, () => instance.connect());
    connection = opened;
    // The query is to read this file only: not the keys file beside it, nor anything over the network.
    await confineConnection(opened, []);
    const result = await failingAs('DuckDB query failed', () => opened.stream(query));
    unfinished = result;
    const columnNames = result.columnNames();
    checkColumns?.(columnNames);
    let row = 0;
    for (let chunk = await nextChunk(result); chunk !== null; chunk = await nextChunk(result)) {
      const columns = columnNames.map((_, index) => chunk.getColumnValues(index));
      for (let i = 0; i < chunk.rowCount; i++) {
        row++;
        yield { columnNames, values: columns.map((values) => values[i]), origin: `duckdb row ${row}`, line: row };
      }
    }
    unfinished = undefined;
  } finally {
    if (connection !== undefined && unfinished !== undefined) await endStreamingQuery(connection, unfinished);
    connection?.closeSync();
    instance.closeSync();
  }
}

/** The next chunk of a streaming result, or null at its end (an empty chunk, or none). */
async function nextChunk(result: DuckDBResult): Promise<DuckDBDataChunk | null> {
  const chunk = await failingAs('DuckDB query failed', () => result.fetchChunk());
  return chunk === null || chunk.rowCount === 0 ? null : chunk;
}

/** Runs a DuckDB call, turning its error into a SourceError that starts with `context`. */
async function failingAs<T>(context: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new SourceError(`${context}: ${duckdbMessage(error)}`);
  }
}

/**
 * DuckDB's message on one line: its first paragraph, without the `LINE 1: ...` excerpt and caret that
 * follow a blank line.
 */
function duckdbMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const [firstParagraph = ''] = message.split(/\n\s*\n/);
  return firstParagraph.replace(/\s*\n\s*/g, ' ').trim();
}
