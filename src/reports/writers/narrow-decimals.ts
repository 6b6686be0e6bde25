import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { sqlName } from '../../warehouse/sql-literals.js';
import { columnsOf, isWideDecimal, NARROW_WIDTH } from './column-text.js';

/**
 * The query's column names and types, and the query with each DECIMAL wider than 18 digits (money is
 * DECIMAL(20,4)) cast to DECIMAL(18, same scale) when every value of the column fits: the same digits
 * in JSON, which DuckDB writes much faster from 64 bits than from 128. A JSON column has one type, so
 * this costs one pass over those columns first.
 */
export async function narrowDecimals(
  connection: DuckDBConnection,
  query: string,
): Promise<{ readonly columns: string[]; readonly types: DuckDBType[]; readonly query: string }> {
  const { columns, types } = await columnsOf(connection, query);
  const wide = columns.flatMap((name, i) => {
    const type = types[i];
    return isWideDecimal(type) ? [{ name, scale: type.scale }] : [];
  });
  if (wide.length === 0) return { columns, types, query };
  const checks = wide.map(
    ({ name, scale }) => `coalesce(max(abs(${sqlName(name)})) < 1${'0'.repeat(NARROW_WIDTH - scale)}, true)`,
  );
  const fits = (await connection.runAndReadAll(`SELECT ${checks.join(', ')} FROM (${query})`)).getRows()[0]!;
  const narrow = new Map(wide.filter((_, i) => fits[i] === true).map(({ name, scale }) => [name, scale]));
  if (narrow.size === 0) return { columns, types, query };
  const select = columns.map((c) =>
    narrow.has(c) ? `CAST(${sqlName(c)} AS DECIMAL(${NARROW_WIDTH},${narrow.get(c)})) AS ${sqlName(c)}` : sqlName(c),
  );
  return { columns, types, query: `SELECT ${select.join(', ')} FROM (${query})` };
}
