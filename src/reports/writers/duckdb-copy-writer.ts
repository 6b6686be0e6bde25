import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlText } from '../../warehouse/sql-literals.js';
import { narrowDecimals } from './narrow-decimals.js';

/**
 * Rows of a Parquet row group, which each writing thread holds until it is full: with DuckDB's default
 * (122,880), a charges file's 62 columns push a report past its memory limit, and it spills and takes
 * up to four times as long.
 */
const PARQUET_ROW_GROUP_ROWS = 65_536;

/** Writes a query's rows with DuckDB's own writer: `parquet`, or `json` (one JSON array). Returns the number of rows. */
export async function writeWithCopy(
  connection: DuckDBConnection,
  query: string,
  path: string,
  format: 'parquet' | 'json',
): Promise<number> {
  // Parquet keeps the columns' types; JSON only has their digits, written faster from narrow decimals.
  const rows = format === 'json' ? (await narrowDecimals(connection, query)).query : query;
  const options =
    format === 'json' ? 'FORMAT json, ARRAY true' : `FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}`;
  const result = await connection.run(`COPY (${rows}) TO ${sqlText(path)} (${options})`);
  return result.rowsChanged;
}
