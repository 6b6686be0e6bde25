import type ExcelJS from 'exceljs';

/** A row of a sheet: its number in the sheet and each cell as text (null when empty), by column from the first. */
export interface WorkbookRow {
  readonly row: number;
  readonly values: readonly (string | null)[];
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
 * The rows of one sheet of an `.xlsx` file (the first, or the one named `sheet`), read as a stream:
 * a large file is never held whole. Rows without a value are left out, as a CSV's empty lines are.
 */
export async function* workbookRows(file: string, sheet: string | undefined): AsyncGenerator<WorkbookRow> {
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
    if (found || (worksheet as unknown as { name: string }).name !== (sheet ?? names[0])) continue;
    found = true;
    for await (const row of worksheet) {
      const values = Array.from(row.values as (ExcelJS.CellValue | undefined)[], cellText).slice(1);
      if (values.some((v) => v !== null && v !== '')) yield { row: row.number, values };
    }
  }
  if (!found)
    throw new Error(
      sheet === undefined
        ? 'no sheet'
        : `no sheet ${JSON.stringify(sheet)}; its sheets are ${names.map((n) => JSON.stringify(n)).join(', ') || '(none)'}`,
    );
}
