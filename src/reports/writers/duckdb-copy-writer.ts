import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBTypeId } from '../../warehouse/duckdb-library.js';
import { sqlName, sqlText } from '../../warehouse/sql-literals.js';
import { displayTimeSql } from '../display-time.js';
import { narrowDecimals } from './narrow-decimals.js';

/**
 * Rows of a Parquet row group, which each writing thread holds until it is full: with DuckDB's default
 * (122,880), a charges file's 62 columns push a report past its memory limit, and it spills and takes
 * up to four times as long.
 */
const PARQUET_ROW_GROUP_ROWS = 65_536;

/** The query with its times as text in the display time zone `zone`, with their offset. */
function withDisplayTimes(narrowed: Awaited<ReturnType<typeof narrowDecimals>>, zone: string): string {
  const { columns, types, query } = narrowed;
  if (!types.some((t) => t.typeId === DuckDBTypeId.TIMESTAMP_TZ)) return query;
  const select = columns.map((c, i) =>
    types[i]!.typeId === DuckDBTypeId.TIMESTAMP_TZ
      ? `${displayTimeSql(sqlName(c), zone)} AS ${sqlName(c)}`
      : sqlName(c),
  );
  return `SELECT ${select.join(', ')} FROM (${query})`;
}

/**
 * Writes a query's rows with DuckDB's own writer: `parquet`, or `json` (one JSON array, its times in
 * the display time zone `zone` with their offset). Returns the number of rows.
 */
export async function writeWithCopy(
  connection: DuckDBConnection,
  query: string,
  path: string,
  format: 'parquet' | 'json',
  zone: string,
): Promise<number> {
  // Parquet keeps the columns' types (times as instants); JSON only has their digits, written faster
  // from narrow decimals, and times as a person reads them.
  const rows = format === 'json' ? withDisplayTimes(await narrowDecimals(connection, query), zone) : query;
  const options =
    format === 'json' ? 'FORMAT json, ARRAY true' : `FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS}`;
  const result = await connection.run(`COPY (${rows}) TO ${sqlText(path)} (${options})`);
  return result.rowsChanged;
}
