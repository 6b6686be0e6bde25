import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { CsvStringifyPool } from './csv-stringify-pool.js';
import { writeCsv } from './csv-writer.js';
import { writeWithCopy } from './duckdb-copy-writer.js';

export const REPORT_FORMATS = ['csv', 'parquet', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** One table of a report: its file's name and the query giving its rows. */
export interface ReportTable {
  readonly name: string;
  readonly query: string;
}

export interface WrittenFile {
  readonly table: string;
  readonly path: string;
  readonly rows: number;
}

/** The file of a table: `<table>_<from>_<to>.<format>`, e.g. `charges_2026-11-01_2026-11-22.csv`. */
export function reportFileName(table: string, range: { readonly from: string; readonly to: string }, format: ReportFormat): string {
  return `${table}_${range.from}_${range.to}.${format}`;
}

/** Writes each table to its file under `outDir` in `format`. */
export async function writeReportTables(
  connection: DuckDBConnection,
  tables: readonly ReportTable[],
  options: { readonly outDir: string; readonly format: ReportFormat; readonly range: { readonly from: string; readonly to: string } },
): Promise<WrittenFile[]> {
  const written: WrittenFile[] = [];
  const pool = new CsvStringifyPool();
  try {
    for (const table of tables) {
      const path = join(options.outDir, reportFileName(table.name, options.range, options.format));
      const rows = options.format === 'csv' ? await writeCsv(connection, table.query, path, pool) : await writeWithCopy(connection, table.query, path, options.format);
      written.push({ table: table.name, path, rows });
    }
  } finally {
    await pool.close();
  }
  return written;
}
