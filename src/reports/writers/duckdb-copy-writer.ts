import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlText } from '../report-sql.js';

/** Writes a query's rows with DuckDB's own writer: `parquet`, or `json` (one JSON array). Returns the number of rows. */
export async function writeWithCopy(connection: DuckDBConnection, query: string, path: string, format: 'parquet' | 'json'): Promise<number> {
  const options = format === 'json' ? 'FORMAT json, ARRAY true' : 'FORMAT parquet';
  const result = await connection.run(`COPY (${query}) TO ${sqlText(path)} (${options})`);
  return result.rowsChanged;
}
