import type { CsvDelimiter } from './csv-header-line.js';
import { type CsvRowItem, csvRows } from './csv-rows.js';
import { duckdbQueryRows } from './duckdb-source.js';
import { describeMysql, mysqlRows } from './mysql-source.js';
import { describePostgres, postgresRows } from './postgres-source.js';
import { queryForDescription } from './query-description.js';
import type { QueryRow } from './source-rows.js';
import { type XlsxRowsOptions, xlsxRows } from './workbook-rows.js';

/** Where named rows come from: a file with a header (CSV, a workbook's sheet) or a query on a database. */
export type TableSource =
  | { readonly kind: 'csv'; readonly file: string; readonly delimiter?: CsvDelimiter | undefined }
  | {
      readonly kind: 'xlsx';
      readonly file: string;
      readonly sheet?: string | undefined;
      readonly errorCells?: XlsxRowsOptions['errorCells'];
    }
  | { readonly kind: 'duckdb'; readonly file: string; readonly query: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly query: string }
  | {
      readonly kind: 'mysql';
      readonly url: string;
      readonly query: string;
      /** The password when the URL holds none; never shown. */
      readonly password?: string | undefined;
    };

/** The rows of a query on a database. */
export type QueryTableSource = Extract<TableSource, { readonly query: string }>;

/** A file's rows: a workbook's sheet when its name ends in `.xlsx`, else a CSV's. */
export function tableFile(file: string, options: { sheet?: string; delimiter?: CsvDelimiter } = {}): TableSource {
  return isWorkbook(file)
    ? { kind: 'xlsx', file, sheet: options.sheet }
    : { kind: 'csv', file, delimiter: options.delimiter };
}

/** Whether a file is read as an Excel workbook: its name ends in `.xlsx`, in any case. */
export function isWorkbook(file: string): boolean {
  return file.toLowerCase().endsWith('.xlsx');
}

/** For logs and the `runs` table: `csv:orders.csv`, `mysql:user@host:3306/db: SELECT ...`; never a password. */
export function describeTable(source: TableSource): string {
  switch (source.kind) {
    case 'csv':
      return `csv:${source.file}`;
    case 'xlsx':
      return `xlsx:${source.file}${source.sheet === undefined ? '' : `#${source.sheet}`}`;
    case 'duckdb':
      return `duckdb:${source.file}: ${queryForDescription(source.query)}`;
    case 'postgres':
      return `${describePostgres(source.url)}: ${queryForDescription(source.query)}`;
    case 'mysql':
      return `${describeMysql(source.url)}: ${queryForDescription(source.query)}`;
  }
}

/** What a query's result is called in messages: `the MySQL query`. */
export function tableName(source: TableSource): string {
  switch (source.kind) {
    case 'csv':
    case 'xlsx':
      return source.file;
    case 'duckdb':
      return 'the DuckDB query';
    case 'postgres':
      return 'the PostgreSQL query';
    case 'mysql':
      return 'the MySQL query';
  }
}

/**
 * The rows of a source, streamed in source order, with rejections of the rows a file's reader cannot
 * read (a CSV row of the wrong length, a sheet's row with an error cell). `checkColumns` sees the
 * column names before any row (and may throw). Failures are SourceErrors in one line, never with a password.
 */
export async function* tableRows(
  source: TableSource,
  checkColumns: (names: readonly string[]) => void,
): AsyncGenerator<CsvRowItem> {
  switch (source.kind) {
    case 'csv':
      yield* csvRows(source.file, source.delimiter, checkColumns);
      return;
    case 'xlsx':
      yield* xlsxRows(source.file, { sheet: source.sheet, errorCells: source.errorCells }, checkColumns);
      return;
    case 'duckdb':
      yield* asRowItems(duckdbQueryRows(source.file, source.query, checkColumns));
      return;
    case 'postgres':
      yield* asRowItems(postgresRows(source.url, source.query, checkColumns));
      return;
    case 'mysql':
      yield* asRowItems(mysqlRows(source.url, source.query, { password: source.password }, checkColumns));
      return;
  }
}

async function* asRowItems(rows: AsyncIterable<QueryRow>): AsyncGenerator<CsvRowItem> {
  for await (const row of rows) yield { kind: 'row', row };
}
