import { type DuckDBConnection, DuckDBDecimalType, type DuckDBType } from '@duckdb/node-api';
import { sqlName } from '../../warehouse/sql-literals.js';

/** The widest DECIMAL DuckDB holds in 64 bits; wider ones take 128-bit integers. */
const NARROW_WIDTH = 18;

/**
 * The query's column names and types, and the query with each DECIMAL wider than 18 digits (money is
 * DECIMAL(20,4)) cast to DECIMAL(18, same scale) when every value of the column fits: the same digits
 * as text or JSON, which DuckDB writes much faster from 64 bits than from 128. Costs one
 * pass over those columns, which report tables hold in temporary tables.
 */
export async function narrowDecimals(
  connection: DuckDBConnection,
  query: string,
): Promise<{ readonly columns: string[]; readonly types: DuckDBType[]; readonly query: string }> {
  const shape = await connection.runAndReadAll(`SELECT * FROM (${query}) LIMIT 0`);
  const columns = shape.columnNames();
  const types = shape.columnTypes();
  const wide = columns.flatMap((name, i) => {
    const type = types[i];
    return type instanceof DuckDBDecimalType && type.width > NARROW_WIDTH && type.scale < NARROW_WIDTH
      ? [{ name, scale: type.scale }]
      : [];
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
