import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlText } from '../../warehouse/sql-literals.js';
import { narrowDecimals } from './narrow-decimals.js';

/** Writes a query's rows with DuckDB's own writer: `parquet`, or `json` (one JSON array). Returns the number of rows. */
export async function writeWithCopy(
  connection: DuckDBConnection,
  query: string,
  path: string,
  format: 'parquet' | 'json',
): Promise<number> {
  // Parquet keeps the columns' types; JSON only has their digits, written faster from narrow decimals.
  const rows = format === 'json' ? (await narrowDecimals(connection, query)).query : query;
  const options = format === 'json' ? 'FORMAT json, ARRAY true' : 'FORMAT parquet';
  const result = await connection.run(`COPY (${rows}) TO ${sqlText(path)} (${options})`);
  return result.rowsChanged;
}
