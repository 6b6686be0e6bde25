import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';

/**
 * Ends a streaming query left unread, which would otherwise keep the database file open (and locked
 * against writers) until the garbage collector finalizes the result: the bindings give no other way
 * to free it. Once interrupted, the query yields only the few chunks it had buffered.
 */
export async function endStreamingQuery(connection: DuckDBConnection, result: DuckDBResult): Promise<void> {
  connection.interrupt();
  try {
    let chunk = await result.fetchChunk();
    while (chunk !== null && chunk.rowCount > 0) chunk = await result.fetchChunk();
  } catch {
    // The query failed or was interrupted: either way it is over, which is all that is needed here.
  }
}
