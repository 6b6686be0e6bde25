import { type DuckDBConnection, DuckDBDecimalType, type DuckDBType } from '@duckdb/node-api';
import { sqlName } from '../../warehouse/sql-literals.js';

/** The widest DECIMAL DuckDB holds in 64 bits; wider ones take 128-bit integers. */
const NARROW_WIDTH = 18;

function isWide(type: DuckDBType | undefined): type is DuckDBDecimalType {
  return type instanceof DuckDBDecimalType && type.width > NARROW_WIDTH && type.scale < NARROW_WIDTH;
}

/**
 * A column's value as DuckDB spells it as text. A DECIMAL wider than 18 digits is converted through
 * DECIMAL(18, same scale) wherever the value fits, which gives the same digits about ten times faster
 * than converting the 128-bit value, without a pass over the rows to learn whether they all fit.
 */
export function textOfColumnSql(expression: string, type: DuckDBType): string {
  const text = `CAST(${expression} AS VARCHAR)`;
  return isWide(type)
    ? `coalesce(CAST(TRY_CAST(${expression} AS DECIMAL(${NARROW_WIDTH},${type.scale})) AS VARCHAR), ${text})`
    : text;
}

/** A query's column names and types, from DuckDB's plan of it, without running it. */
export async function columnsOf(
  connection: DuckDBConnection,
  query: string,
): Promise<{ readonly columns: string[]; readonly types: DuckDBType[] }> {
  const shape = await connection.runAndReadAll(`SELECT * FROM (${query}) LIMIT 0`);
  return { columns: shape.columnNames(), types: shape.columnTypes() };
}

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
    return isWide(type) ? [{ name, scale: type.scale }] : [];
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
