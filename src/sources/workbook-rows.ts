import { once } from 'node:events';
import { access } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import type ExcelJS from 'exceljs';
import pRetry from 'p-retry';
import type { CsvRowItem } from './csv-rows.js';
import { maskedOneLineMessage } from './masked-message.js';
import { SourceError } from './order-code-source.js';

/** A row of a sheet: its number in the sheet and each cell as text (null when empty), by column from the first. */
export interface WorkbookRow {
  readonly row: number;
  readonly values: readonly (string | null)[];
  /** The columns (0 for the first) whose cell holds an error (`#N/A`, `#REF!`), which `values` gives as its code. */
  readonly errorColumns: readonly number[];
}

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** A date cell as a CSV export gives it: the day, and the time of day when it has one. */
function dateText(date: Date): string {
  const day = `${date.getUTCFullYear()}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}`;
  const seconds = date.getUTCHours() * 3600 + date.getUTCMinutes() * 60 + date.getUTCSeconds();
  return seconds === 0
    ? day
    : `${day} ${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}`;
}

/**
 * A cell's value as the text a CSV of the sheet holds: a number in its shortest exact spelling
 * (`1184800`, `12.5`), a date as `YYYY-MM-DD` (and its time of day), TRUE or FALSE, a formula's last
 * result, an error as its code (`#N/A`), rich text and links as their text.
 */
function cellText(value: ExcelJS.CellValue | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return dateText(value);
  if ('richText' in value) return value.richText.map((part) => part.text).join('');
  if ('error' in value) return value.error;
  if ('formula' in value || 'sharedFormula' in value) return cellText(value.result);
  if ('text' in value) return typeof value.text === 'string' ? value.text : cellText(value.text);
  return null;
}

/**
 * ExcelJS's streaming reader races with its unzip stream (exceljs issue 3064): now and then it parses
 * a worksheet before the workbook part that names the sheets (a TypeError), or takes the archive for
 * ended early (FILE_ENDED), for a while together on a busy machine. The same file reads whole later.
 */
class WorkbookReadRace extends Error {
  constructor(readonly failure: Error) {
    super(failure.message);
  }
}

function asReadRace(error: unknown): unknown {
  const race = error instanceof TypeError || (error instanceof Error && error.message === 'FILE_ENDED');
  return race ? new WorkbookReadRace(error as Error) : error;
}

/** Rows read ahead of the consumer: enough to keep the reader busy, few enough to hold nothing large. */
const ROWS_READ_AHEAD = 256;

/**
 * The rows of one sheet of an `.xlsx` file (the first, or the one named `sheet`), read as a stream:
 * a large file is never held whole. Rows without a value are left out, as a CSV's empty lines are.
 * A read that meets ExcelJS's race is made again after a pause, the rows already given skipped.
 */
export async function* workbookRows(file: string, sheet: string | undefined): AsyncGenerator<WorkbookRow> {
  const rows = new PassThrough({ objectMode: true, highWaterMark: ROWS_READ_AHEAD });
  let lastGiven = 0;
  const readOnce = async () => {
    try {
      for await (const row of readSheet(file, sheet)) {
        if (rows.destroyed) return;
        if (row.row <= lastGiven) continue;
        lastGiven = row.row;
        if (!rows.write(row)) await Promise.race([once(rows, 'drain'), once(rows, 'close')]);
      }
    } catch (error) {
      throw asReadRace(error);
    }
  };
  pRetry(readOnce, {
    retries: 5,
    minTimeout: 100,
    factor: 2,
    shouldRetry: (error) => error instanceof WorkbookReadRace && !rows.destroyed,
  }).then(
    // A consumer that stopped early destroyed the rows: nothing is left to end.
    () => (rows.destroyed ? undefined : rows.end()),
    (error: unknown) => rows.destroy(error instanceof WorkbookReadRace ? error.failure : (error as Error)),
  );
  yield* rows;
}

/** One read of the sheet's rows, as workbookRows gives them. */
async function* readSheet(file: string, sheet: string | undefined): AsyncGenerator<WorkbookRow> {
  const { default: exceljs } = await import('exceljs');
  // Styles tell a date from a number; shared strings are the workbook's texts, which cells point to.
  const reader = new exceljs.stream.xlsx.WorkbookReader(file, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  let names: readonly string[] = [];
  let found = false;
  for await (const worksheet of reader) {
    names = (reader as unknown as { model?: { sheets?: { name: string }[] } }).model?.sheets?.map((s) => s.name) ?? [];
    if (found || (worksheet as unknown as { name: string }).name !== (sheet ?? names[0])) {
      // A sheet left unread may be parked in a temporary file that ExcelJS removes once the reader
      // moves on, and then fails to open: reading it through costs its rows, not the process.
      for await (const _row of worksheet);
      continue;
    }
    found = true;
    for await (const row of worksheet) {
      const cells = Array.from(row.values as (ExcelJS.CellValue | undefined)[]).slice(1);
      const values = cells.map(cellText);
      if (values.some((v) => v !== null && v !== ''))
        yield {
          row: row.number,
          values,
          errorColumns: cells.flatMap((cell, column) => (isErrorCell(cell) ? [column] : [])),
        };
    }
  }
  if (!found)
    throw new SourceError(
      sheet === undefined
        ? `${file}: no sheet`
        : `${file}: no sheet ${JSON.stringify(sheet)}; its sheets are ${names.map((n) => JSON.stringify(n)).join(', ') || '(none)'}`,
    );
}

function isErrorCell(cell: ExcelJS.CellValue | undefined): boolean {
  if (cell === null || typeof cell !== 'object' || cell instanceof Date) return false;
  if ('error' in cell) return true;
  return ('formula' in cell || 'sharedFormula' in cell) && isErrorCell(cell.result);
}

/** A column's letters as a spreadsheet names it: A, Z, AA. */
function columnLetters(column: number): string {
  let letters = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

export interface XlsxRowsOptions {
  /** The sheet to read (default: the first). */
  readonly sheet?: string | undefined;
  /**
   * `reject` (the default): a row with an error cell (`#N/A`) among the header's columns is a
   * rejection naming the cell; `text`: the cell reads as its code, as a CSV export of the sheet holds it.
   */
  readonly errorCells?: 'reject' | 'text';
}

/**
 * The rows of a sheet of an `.xlsx` file with a header, as named values, read as a stream: the first
 * row with a value is the header, each later row with a value a row, `FILE:ROW` its origin (its number
 * in the sheet). Cells read as the text a CSV of the sheet holds (see cellText); an empty one is null.
 * `checkColumns` sees the header's names (and may throw). A missing file, a file that is no workbook
 * or a sheet that is not in it is a SourceError in one line that starts with the file's name.
 */
export async function* xlsxRows(
  file: string,
  options: XlsxRowsOptions = {},
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<CsvRowItem> {
  try {
    await access(file);
  } catch {
    throw new SourceError(`${file}: no such file`);
  }
  const rows = workbookRows(file, options.sheet);
  let columnNames: string[] | undefined;
  for (;;) {
    let next: IteratorResult<WorkbookRow>;
    try {
      next = await rows.next();
    } catch (error) {
      if (error instanceof SourceError) throw error;
      throw new SourceError(`${file}: not a readable .xlsx workbook (${maskedOneLineMessage(error, [])})`);
    }
    if (next.done) break;
    const { row, values, errorColumns } = next.value;
    if (columnNames === undefined) {
      columnNames = values.map((name) => (name ?? '').trim());
      checkColumns?.(columnNames);
      continue;
    }
    const origin = `${file}:${row}`;
    const names = columnNames;
    const errors = errorColumns.filter((column) => column < names.length);
    if (options.errorCells !== 'text' && errors.length > 0) {
      const cells = errors.map(
        (column) => `${columnLetters(column)}${row} (${names[column] || 'no name'}) holds ${values[column]}`,
      );
      yield { kind: 'rejected', rejection: { origin, reason: `cell ${cells.join(', cell ')}`, text: null } };
      continue;
    }
    yield { kind: 'row', row: { columnNames: names, values, origin, line: row } };
  }
  if (columnNames === undefined) throw new SourceError(`${file}: no header row (the sheet is empty)`);
}
