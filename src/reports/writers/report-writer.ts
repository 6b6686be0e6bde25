import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DEFAULT_DISPLAY_TIME_ZONE } from '../display-time.js';
import { writeCsv } from './csv-writer.js';
import { writeWithCopy } from './duckdb-copy-writer.js';
import type { ReportFormat } from './report-formats.js';
import { ReportWorkbook, SHEET_ROW_LIMIT } from './xlsx-writer.js';

/** One table of a report: its file's name and the query giving its rows; `anyOrder`: the file's rows may come in any order. */
export interface ReportTable {
  readonly name: string;
  readonly query: string;
  /**
   * The same rows with the same values in narrower types, which DuckDB converts faster: what the
   * formats that write values (CSV, JSON, a workbook) read, where Parquet keeps `query`'s types.
   */
  readonly valuesQuery?: string;
  readonly anyOrder?: boolean;
}

/** The query a format reads of a table. */
function queryFor(table: ReportTable, format: ReportFormat): string {
  return format === 'parquet' ? table.query : (table.valuesQuery ?? table.query);
}

export interface WrittenFile {
  readonly table: string;
  readonly path: string;
  readonly rows: number;
  /** In a workbook: the sheets that hold the table's rows. */
  readonly sheets?: readonly string[];
}

/** The file of a table: `<table>_<from>_<to>.<format>`, e.g. `charges_2026-11-01_2026-11-22.csv`. */
export function reportFileName(
  table: string,
  range: { readonly from: string; readonly to: string },
  format: ReportFormat,
): string {
  return `${table}_${range.from}_${range.to}.${format}`;
}

/**
 * Runs `work` with DuckDB free to give the rows in any order when `anyOrder`: a COPY or a temporary
 * table is then filled on every thread, without the ordered batches that cost the charges files a
 * large share of their CPU time. The connection's setting is put back after.
 */
export async function inAnyOrder<T>(
  connection: DuckDBConnection,
  anyOrder: boolean,
  work: () => Promise<T>,
): Promise<T> {
  if (!anyOrder) return work();
  const setting = (
    await connection.runAndReadAll("SELECT current_setting('preserve_insertion_order')")
  ).getRows()[0]![0];
  await connection.run('SET preserve_insertion_order = false');
  try {
    return await work();
  } finally {
    await connection.run(`SET preserve_insertion_order = ${setting === false ? 'false' : 'true'}`);
  }
}

/**
 * Writes the tables as one workbook under `outDir`, a table per sheet, named as the first table: a
 * report's own table (`charges`, one row per order), which goes last, after the summaries.
 * `sheetRowLimit`: rows a sheet holds, its header included.
 */
async function writeWorkbook(
  connection: DuckDBConnection,
  tables: readonly ReportTable[],
  options: { readonly outDir: string; readonly range: { readonly from: string; readonly to: string } },
  sheetRowLimit: number,
  zone: string,
): Promise<WrittenFile[]> {
  const [own, ...summaries] = tables;
  if (own === undefined) return [];
  const path = join(options.outDir, reportFileName(own.name, options.range, 'xlsx'));
  const workbook = await ReportWorkbook.create(path, zone, sheetRowLimit);
  const written: WrittenFile[] = [];
  for (const table of [...summaries, own]) {
    const { rows, sheets } = await inAnyOrder(connection, table.anyOrder === true, () =>
      workbook.addTable(connection, { name: table.name, query: queryFor(table, 'xlsx') }),
    );
    written.push({ table: table.name, path, rows, sheets });
  }
  await workbook.close();
  return written;
}

/** Writes each table to its file under `outDir` in `format`; as `xlsx`, all in one workbook. */
export async function writeReportTables(
  connection: DuckDBConnection,
  tables: readonly ReportTable[],
  options: {
    readonly outDir: string;
    readonly format: ReportFormat;
    readonly range: { readonly from: string; readonly to: string };
    /** Rows a sheet of a workbook holds, its header included: Excel's limit unless a test lowers it. */
    readonly sheetRowLimit?: number;
    /** The time zone the files show times in (an IANA name); Parquet keeps instants. */
    readonly timeZone?: string;
  },
): Promise<WrittenFile[]> {
  const { format } = options;
  const zone = options.timeZone ?? DEFAULT_DISPLAY_TIME_ZONE;
  const paths = tables.map((table) => join(options.outDir, reportFileName(table.name, options.range, format)));
  try {
    if (format === 'xlsx')
      return await writeWorkbook(connection, tables, options, options.sheetRowLimit ?? SHEET_ROW_LIMIT, zone);
    const written: WrittenFile[] = [];
    for (const [index, table] of tables.entries()) {
      const path = paths[index]!;
      const rows = await inAnyOrder(connection, table.anyOrder === true, () =>
        format === 'csv'
          ? writeCsv(connection, queryFor(table, format), path, zone)
          : writeWithCopy(connection, queryFor(table, format), path, format, zone),
      );
      written.push({ table: table.name, path, rows });
    }
    return written;
  } catch (error) {
    // A report is its files together: none of them is left half written, or beside a missing one.
    for (const path of paths) await rm(path, { force: true });
    throw error;
  }
}
