import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBTypeId } from '../../warehouse/duckdb-library.js';
import { formulaSafeTextSql } from '../../warehouse/formula-safe-text.js';
import { sqlName, sqlText } from '../../warehouse/sql-literals.js';
import { displayTimeSql } from '../display-time.js';
import { columnsOf, textOfColumnSql } from './column-text.js';
import { NUMBER_TYPES } from './number-column-types.js';

/** UTF-8's byte order mark, which tells spreadsheets the file is UTF-8 (Vietnamese text). */
const BOM = '\uFEFF';

/** The characters that make csv-stringify quote a cell: the delimiter, the quote and line breaks. */
const NEEDS_QUOTES = [',', '"', '\n', '\r'];

/** A cell as csv-stringify writes it by default: quoted, its quotes doubled, when it holds a comma, a quote or a line break. */
export function csvCell(text: string): string {
  return NEEDS_QUOTES.some((c) => text.includes(c)) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The same rule in SQL, over a VARCHAR expression (null stays null, which the file writes as an empty cell). */
function csvCellSql(expression: string): string {
  const needsQuotes = NEEDS_QUOTES.map((c) => `contains(${expression}, ${sqlText(c)})`).join(' OR ');
  return `CASE WHEN ${needsQuotes} THEN '"' || replace(${expression}, '"', '""') || '"' ELSE ${expression} END`;
}

/** Types whose text never holds a comma, a quote or a line break: their cells need no quoting rule. */
const PLAIN_TYPES: ReadonlySet<DuckDBTypeId> = new Set([
  ...NUMBER_TYPES,
  DuckDBTypeId.BOOLEAN,
  DuckDBTypeId.DECIMAL,
  DuckDBTypeId.DATE,
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_TZ,
]);

/**
 * Writes a query's rows as CSV with DuckDB's own writer (COPY), byte for byte as csv-stringify writes
 * them: UTF-8 with a byte order mark (so spreadsheets read Vietnamese text as UTF-8), a header row,
 * every value as DuckDB spells it as text (exact money), times in the display time zone `zone` with
 * their offset, empty for null, a text that would start a formula after a `'`, a cell quoted only when it holds a comma, a quote or a line break.
 * DuckDB's own quoting differs (it quotes an empty text and any `#`), so the query builds each line
 * and COPY writes it as one unquoted cell, which also spares its writer the work of a cell per value.
 * Returns the number of rows.
 */
export async function writeCsv(
  connection: DuckDBConnection,
  query: string,
  path: string,
  zone: string,
): Promise<number> {
  const { columns, types } = await columnsOf(connection, query);
  const texts = columns.map((c, i) => {
    const type = types[i]!;
    const text =
      type.typeId === DuckDBTypeId.VARCHAR
        ? formulaSafeTextSql(sqlName(c))
        : type.typeId === DuckDBTypeId.TIMESTAMP_TZ
          ? displayTimeSql(sqlName(c), zone)
          : textOfColumnSql(sqlName(c), type);
    return `${text} AS ${sqlName(`c${i}`)}`;
  });
  const cells = columns.map((_, i) =>
    PLAIN_TYPES.has(types[i]!.typeId) ? sqlName(`c${i}`) : csvCellSql(sqlName(`c${i}`)),
  );
  // concat skips nulls, which leaves the empty cell csv-stringify writes for one.
  const line = `concat(${cells.join(", ',', ")})`;
  const header = BOM + columns.map(csvCell).join(',');
  const result = await connection.run(
    `COPY (SELECT ${line} AS ${sqlName(header)} FROM (SELECT ${texts.join(', ')} FROM (${query})))
     TO ${sqlText(path)} (FORMAT csv, HEADER, QUOTE '', ESCAPE '', DELIMITER ',', NEW_LINE '\\n')`,
  );
  return result.rowsChanged;
}
