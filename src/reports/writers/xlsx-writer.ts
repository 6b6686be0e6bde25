import { type EventEmitter, once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBDataChunk, DuckDBResult } from '@duckdb/node-api';
import type ExcelJS from 'exceljs';
import { DuckDBTypeId } from '../../warehouse/duckdb-library.js';
import { formulaSafeTextSql } from '../../warehouse/formula-safe-text.js';
import { sqlName } from '../../warehouse/sql-literals.js';
import { endStreamingQuery } from '../../warehouse/streaming-query.js';
import { displayWallTimeMsSql } from '../display-time.js';
import { columnsOf } from './column-text.js';
import { NUMBER_TYPES } from './number-column-types.js';

/** The most rows a worksheet holds, its header row included (Excel's limit). */
export const SHEET_ROW_LIMIT = 1_048_576;

/** Whole dong with thousands separators and no decimals, as finance reads VND. */
const WHOLE_VND_FORMAT = '#,##0 "VND"';
/** A money amount with a fraction of a dong (a share, a partner's amount) shows its digits. */
const FRACTIONAL_VND_FORMAT = '#,##0.0### "VND"';
const TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';
const DAY_FORMAT = 'yyyy-mm-dd';
/** A text that is a decimal amount as DuckDB spells one (`-5.0000`, `-5`): a number in the sheet, not text. */
const AMOUNT_TEXT = /^-?\d{1,15}\.\d{1,4}$|^-\d{1,15}$/;

/** What a column's cells hold in the sheet, from its DuckDB type. */
type CellKind = 'text' | 'money' | 'number' | 'boolean' | 'time' | 'day';

function cellKind(type: DuckDBTypeId): CellKind {
  if (type === DuckDBTypeId.DECIMAL) return 'money';
  if (NUMBER_TYPES.has(type)) return 'number';
  if (type === DuckDBTypeId.BOOLEAN) return 'boolean';
  if (type === DuckDBTypeId.TIMESTAMP_TZ) return 'time';
  if (type === DuckDBTypeId.DATE) return 'day';
  return 'text';
}

/**
 * The column as the query hands it to the sheet: numbers as DOUBLE (a spreadsheet's numbers; 64-bit
 * integers would come as bigint), times as epoch milliseconds of their wall time in the display time
 * zone `zone` (a spreadsheet's dates have no time zone), days as epoch milliseconds of their
 * midnight, text formula-safe as in the CSV.
 */
function cellSql(column: string, kind: CellKind, zone: string): string {
  const name = sqlName(column);
  switch (kind) {
    case 'money':
    case 'number':
      return `CAST(${name} AS DOUBLE)`;
    case 'boolean':
      return name;
    case 'time':
      return displayWallTimeMsSql(name, zone);
    case 'day':
      return `CAST(epoch_ms(CAST(${name} AS TIMESTAMP)) AS DOUBLE)`;
    case 'text':
      return formulaSafeTextSql(`CAST(${name} AS VARCHAR)`);
  }
}

type CellValue = string | number | boolean | Date | null;

function cellValue(value: unknown, kind: CellKind): CellValue {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'time':
    case 'day':
      return new Date(value as number);
    case 'money':
    case 'number':
      // A spreadsheet has no NaN or infinity: those stay readable as text.
      return Number.isFinite(value) ? (value as number) : String(value);
    case 'text':
      // An amount carried as text (a partner's value beside a status) is a number; a negative one is no formula.
      return typeof value === 'string' && AMOUNT_TEXT.test(value) ? Number(value) : (value as string);
    default:
      return value as string | boolean;
  }
}

/** A column's header, width and style: one style object, which each of its cells then shares. */
function columnDefinition(header: string, kind: CellKind): Partial<ExcelJS.Column> & { style: Partial<ExcelJS.Style> } {
  const numFmt = { money: WHOLE_VND_FORMAT, time: TIME_FORMAT, day: DAY_FORMAT }[kind as string];
  const width = Math.max(header.length + 2, kind === 'time' ? 20 : 12);
  return { header, width, style: numFmt === undefined ? {} : { numFmt } };
}

/** The styles of amounts with a fraction of a dong and of amounts in text columns, shared by their cells. */
const FRACTIONAL_VND_STYLE: Partial<ExcelJS.Style> = { numFmt: FRACTIONAL_VND_FORMAT };
const WHOLE_VND_STYLE: Partial<ExcelJS.Style> = { numFmt: WHOLE_VND_FORMAT };

/** A cell's style: its column's, but an amount's VND format where its column is money or text. */
function cellStyle(value: ExcelJS.CellValue, kind: CellKind, column: Partial<ExcelJS.Style>): Partial<ExcelJS.Style> {
  if (typeof value !== 'number' || (kind !== 'money' && kind !== 'text')) return column;
  return Number.isInteger(value) ? WHOLE_VND_STYLE : FRACTIONAL_VND_STYLE;
}

/** One table's sheets: its rows (the header not counted) and the names of the sheets they went to. */
export interface TableSheets {
  readonly rows: number;
  readonly sheets: readonly string[];
}

/** What exceljs's streaming sheet writes its XML through: its buffer and the zip entry that reads it. */
interface SheetStream {
  readonly stream: {
    readonly pipes: readonly (EventEmitter & { readonly _writableState: { readonly needDrain: boolean } })[];
  };
}

/** The next chunk of a streaming result, or null at its end. */
async function nextChunk(result: DuckDBResult): Promise<DuckDBDataChunk | null> {
  const chunk = await result.fetchChunk();
  return chunk === null || chunk.rowCount === 0 ? null : chunk;
}

/**
 * A report's workbook, written as it goes with exceljs's streaming writer: each table's rows stream
 * from DuckDB a chunk at a time and each row is committed to the file as it is added, so no table is
 * ever held whole. Cells keep their types: money as numbers in a VND format (whole dong without
 * decimals), times as dates in the display time zone (the header names it), text as text (never a formula; a text that would
 * start one after a `'`, as in the CSV). Each sheet has its header row frozen and an auto filter.
 * A table of more rows than a sheet holds goes on as many sheets as it needs, the second named
 * `<table> (2)`, each with its header.
 */
export class ReportWorkbook {
  readonly #workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  /** Rejects when the file stops taking bytes (a full disk): whatever waits on the file then fails. */
  readonly #failed: Promise<never>;

  private constructor(
    exceljs: typeof ExcelJS,
    file: WriteStream,
    private readonly zone: string,
    private readonly sheetRowLimit: number,
  ) {
    this.#failed = new Promise((_, reject) => file.once('error', reject));
    this.#failed.catch(() => {});
    // Inline strings: shared strings would keep every distinct text of the report in memory.
    this.#workbook = new exceljs.stream.xlsx.WorkbookWriter({ stream: file, useStyles: true, useSharedStrings: false });
  }

  /**
   * Creates (or replaces) the file; a path the system refuses throws here. `zone`: the display time
   * zone its date cells hold wall times of. `sheetRowLimit`: rows a sheet holds, its header included;
   * Excel's limit, lower only in tests.
   */
  static async create(path: string, zone: string, sheetRowLimit = SHEET_ROW_LIMIT): Promise<ReportWorkbook> {
    // Loaded when a workbook is written: exceljs takes longer to load than most reports take to run.
    const { default: exceljs } = await import('exceljs');
    const file = await open(path, 'w');
    return new ReportWorkbook(exceljs, file.createWriteStream(), zone, sheetRowLimit);
  }

  /** Streams the query's rows onto the table's sheets. */
  async addTable(
    connection: DuckDBConnection,
    table: { readonly name: string; readonly query: string },
  ): Promise<TableSheets> {
    const { columns: names, types } = await columnsOf(connection, table.query);
    const kinds = types.map((t) => cellKind(t.typeId));
    const select = names.map((n, i) => `${cellSql(n, kinds[i]!, this.zone)} AS ${sqlName(`c${i}`)}`).join(', ');
    const headers = names.map((n, i) => (kinds[i] === 'time' ? `${n} (${this.zone})` : n));
    const columns = headers.map((h, i) => columnDefinition(h, kinds[i]!));

    const sheets: string[] = [];
    let sheet: ExcelJS.Worksheet | undefined;
    let sheetRows = 0;
    let rows = 0;
    const result = await connection.stream(`SELECT ${select} FROM (${table.query})`);
    let unfinished: DuckDBResult | undefined = result;
    try {
      for (let chunk = await nextChunk(result); chunk !== null; chunk = await nextChunk(result)) {
        if (sheet !== undefined) await this.#caughtUp(sheet);
        const values = kinds.map((_, i) => chunk.getColumnValues(i));
        for (let r = 0; r < chunk.rowCount; r++) {
          if (sheet === undefined || sheetRows === this.sheetRowLimit - 1) {
            if (sheet !== undefined) this.#closeSheet(sheet, columns.length, sheetRows);
            sheet = this.#openSheet(sheets.length === 0 ? table.name : `${table.name} (${sheets.length + 1})`, columns);
            sheets.push(sheet.name);
            sheetRows = 0;
          }
          const row = sheet.addRow(values.map((column, i) => cellValue(column[r], kinds[i]!)));
          // exceljs gives each cell a copy of its column's style and looks every copy up among the
          // workbook's styles; the column's own object it looks up once.
          row.eachCell((cell, column) => {
            cell.style = cellStyle(cell.value, kinds[column - 1]!, columns[column - 1]!.style);
          });
          row.commit();
          sheetRows++;
          rows++;
        }
      }
      unfinished = undefined;
    } finally {
      if (unfinished !== undefined) await endStreamingQuery(connection, unfinished);
    }
    if (sheet === undefined) {
      sheet = this.#openSheet(table.name, columns);
      sheets.push(sheet.name);
    }
    this.#closeSheet(sheet, columns.length, sheetRows);
    return { rows, sheets };
  }

  /** Finishes the file. */
  async close(): Promise<void> {
    await Promise.race([this.#workbook.commit(), this.#failed]);
  }

  /**
   * Waits while the zip is behind with the sheet. exceljs hands the sheet's XML to the zip's entry
   * without waiting for it, so a sheet written faster than the zip compresses it would pile up in
   * memory; the entry says when it holds more than it takes at once, and when it has taken it.
   */
  async #caughtUp(sheet: ExcelJS.Worksheet): Promise<void> {
    const [entry] = (sheet as unknown as SheetStream).stream.pipes;
    if (entry?._writableState.needDrain === true) await Promise.race([once(entry, 'drain'), this.#failed]);
  }

  #openSheet(name: string, columns: Partial<ExcelJS.Column>[]): ExcelJS.Worksheet {
    const sheet = this.#workbook.addWorksheet(name, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = columns;
    sheet.getRow(1).font = { bold: true };
    sheet.getRow(1).commit();
    return sheet;
  }

  #closeSheet(sheet: ExcelJS.Worksheet, columns: number, rows: number): void {
    sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: rows + 1, column: columns } };
    sheet.commit();
  }
}
