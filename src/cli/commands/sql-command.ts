import type {
  DuckDBConnection,
  DuckDBResultReader,
  DuckDBTimestampTZValue,
  DuckDBValueConverter,
  Json,
} from '@duckdb/node-api';
import { Command, Option } from 'commander';
import { stringify } from 'csv-stringify/sync';
import { UserError } from '../../errors/user-error.js';
import { formatDisplayMicros } from '../../reports/display-time.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { DuckDBTypeId, JsonDuckDBValueConverter, StatementType } from '../../warehouse/duckdb-library.js';
import { formulaSafeText } from '../../warehouse/formula-safe-text.js';
import { firstLineOf, isAccessRefusal } from '../../warehouse/warehouse-errors.js';
import { withReading } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

type Cell = string | number | boolean | null | object;

function cellText(value: Cell): string {
  if (value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Rows as aligned columns for a terminal. */
function formatTable(columns: string[], rows: Record<string, Cell>[]): string {
  const texts = rows.map((row) => columns.map((c) => cellText(row[c] ?? null)));
  const widths = columns.map((c, i) => Math.max(c.length, ...texts.map((t) => t[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(columns), line(widths.map((w) => '-'.repeat(w))), ...texts.map(line)].join('\n')}\n`;
}

/**
 * Cells as JSON values, each instant (nested ones too) in the display time zone with its offset, as the
 * reports show it; the client's own text of an instant would follow the machine's time zone.
 */
function cellConverter(zone: string): DuckDBValueConverter<Json> {
  const convert: DuckDBValueConverter<Json> = (value, type) => {
    if (type.typeId !== DuckDBTypeId.TIMESTAMP_TZ || value === null)
      return JsonDuckDBValueConverter(value, type, convert);
    const instant = value as DuckDBTimestampTZValue;
    return formatDisplayMicros(instant.micros, zone) ?? String(instant);
  };
  return convert;
}

/**
 * A snapshot's folder is open to its reader, so that DuckDB reads its files: a statement that could
 * write there (COPY, EXPORT) is refused before it runs, and only queries are let through.
 */
async function refuseAllButQueries(connection: DuckDBConnection, query: string): Promise<void> {
  const statements = await connection.extractStatements(query);
  for (let i = 0; i < statements.count; i++) {
    const type = (await statements.prepare(i)).statementType;
    if (type !== StatementType.SELECT && type !== StatementType.EXPLAIN)
      throw new UserError('query refused: a snapshot answers queries (SELECT) only', 'QUERY_REFUSED');
  }
}

/**
 * Runs one read-only SQL query on the warehouse, or on its Parquet snapshot: for analysts without the
 * duckdb command line. The query reads no file but the warehouse's (the snapshot's), writes none,
 * loads no extension and changes no setting.
 */
export function sqlCommand(): Command {
  const command = new Command('sql')
    .description('Run a read-only SQL query on the warehouse and print the rows.')
    .argument('<query>', 'the SQL query');
  return withSettingOptions(command, 'sql', SETTINGS)
    .option('--snapshot <dir>', 'read the Parquet snapshot export --to wrote instead of the warehouse')
    .addOption(new Option('--format <format>', 'table, csv or json').choices(['table', 'csv', 'json']).default('table'))
    .action(async (query: string, flags: { snapshot?: string; format: 'table' | 'csv' | 'json' }) => {
      const settings = await loadSettings('sql', flags, process.env);
      await withReading(settings, flags.snapshot, {}, WAREHOUSE_BUSY_WAIT_MS, async (warehouse) => {
        let reader: DuckDBResultReader;
        try {
          if (flags.snapshot !== undefined) await refuseAllButQueries(warehouse.connection, query);
          reader = await warehouse.connection.runAndReadAll(query);
        } catch (error) {
          if (error instanceof UserError) throw error;
          if (isAccessRefusal(error)) throw new UserError(`query refused: ${firstLineOf(error)}`, 'QUERY_REFUSED');
          throw new UserError(`query failed: ${firstLineOf(error)}`);
        }
        const columns = reader.columnNames();
        const rows = reader.convertRowObjects(cellConverter(settings.values.timeZone)) as Record<string, Cell>[];
        if (flags.format === 'json') process.stdout.write(`${JSON.stringify(rows)}\n`);
        else if (flags.format === 'csv') {
          // Text cells as the report files write them, so a spreadsheet never runs one as a formula.
          const isText = reader.columnTypes().map((type) => type.typeId === DuckDBTypeId.VARCHAR);
          const cell = (row: Record<string, Cell>, column: string, i: number) =>
            isText[i] && typeof row[column] === 'string' ? formulaSafeText(row[column]) : cellText(row[column] ?? null);
          process.stdout.write(
            stringify(
              rows.map((r) => columns.map((c, i) => cell(r, c, i))),
              { header: true, columns },
            ),
          );
        } else process.stdout.write(formatTable(columns, rows));
      });
    });
}
