import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { DuckDBDecimalType, DuckDBTypeId } from '../../warehouse/duckdb-library.js';
import { sqlName } from '../../warehouse/sql-literals.js';
import { displayTimeSql } from '../display-time.js';

/** The widest DECIMAL DuckDB holds in 64 bits; wider ones take 128-bit integers. */
export const NARROW_WIDTH = 18;

export function isWideDecimal(type: DuckDBType | undefined): type is DuckDBDecimalType {
  return type instanceof DuckDBDecimalType && type.width > NARROW_WIDTH && type.scale < NARROW_WIDTH;
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
 * The query with every column cast to text, as DuckDB spells it (exact money), times in the display
 * time zone `zone` with their offset; and its column names.
 */
export async function asTextQuery(
  connection: DuckDBConnection,
  query: string,
  zone: string,
): Promise<{ readonly columns: string[]; readonly query: string }> {
  const { columns, types } = await columnsOf(connection, query);
  const asText = columns.map((c, i) => {
    const text =
      types[i]!.typeId === DuckDBTypeId.TIMESTAMP_TZ
        ? displayTimeSql(sqlName(c), zone)
        : `CAST(${sqlName(c)} AS VARCHAR)`;
    return `${text} AS ${sqlName(c)}`;
  });
  return { columns, query: `SELECT ${asText.join(', ')} FROM (${query})` };
}

/**
 * A column's value as DuckDB spells it as text, by faster ways to the same characters where the type
 * allows. A DECIMAL wider than 18 digits goes through DECIMAL(18, same scale) wherever the value fits:
 * about ten times faster than converting the 128-bit value, and no pass over the rows to learn
 * whether they all fit. A zero, the most common money and weight difference, is a constant.
 */
export function textOfColumnSql(expression: string, type: DuckDBType): string {
  const text = `CAST(${expression} AS VARCHAR)`;
  if (type instanceof DuckDBDecimalType) {
    // `whole` digits, then `scale` after the point: as DuckDB spells a DECIMAL of that scale.
    const digits = (digit: string, whole: number) =>
      `${digit.repeat(whole)}${type.scale > 0 ? `.${digit.repeat(type.scale)}` : ''}`;
    const zero = `CASE WHEN ${expression} = 0 THEN '${digits('0', 1)}'`;
    if (!isWideDecimal(type)) return `${zero} ELSE ${text} END`;
    const largest = digits('9', NARROW_WIDTH - type.scale);
    return `${zero} WHEN ${expression} BETWEEN -${largest} AND ${largest} THEN CAST(CAST(${expression} AS DECIMAL(${NARROW_WIDTH},${type.scale})) AS VARCHAR) ELSE ${text} END`;
  }
  // A negative zero is spelled -0.0.
  if (type.typeId === DuckDBTypeId.DOUBLE || type.typeId === DuckDBTypeId.FLOAT)
    return `CASE WHEN ${expression} = 0 AND NOT signbit(${expression}) THEN '0.0' ELSE ${text} END`;
  // DuckDB spells a boolean true or false; a constant per value costs less than converting it.
  if (type.typeId === DuckDBTypeId.BOOLEAN)
    return `CASE WHEN ${expression} THEN 'true' WHEN NOT ${expression} THEN 'false' END`;
  return text;
}
