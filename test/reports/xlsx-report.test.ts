/**
 * Reports as Excel workbooks (the built CLI over a synthetic warehouse): each report's workbook holds
 * the same rows and values as its CSV files, a sheet per file, money as numbers, times as
 * dates in the display time zone, the header frozen and filtered, formula-like text safe, Vietnamese intact; a
 * table longer than a sheet goes on over further sheets. Partner records from an `.xlsx` file give
 * the same findings as the same lines in a CSV; `--sheet` picks a sheet.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { writeReportTables } from '../../src/reports/writers/report-writer.js';
import { SHEET_ROW_LIMIT } from '../../src/reports/writers/xlsx-writer.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';
import { fileOf } from './report-fixtures.js';

const NOW = { PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' };
const RANGE = ['--from', '2026-10-01', '--to', '2026-12-31'];
const FORMULA_NOTE = '=HYPERLINK("http://evil.example/x","Xem chi tiết")';
const VIETNAMESE = 'Người nhận hẹn giao lại vào sáng thứ Hai';
const ZONE = 'Asia/Ho_Chi_Minh';

interface WrittenFile {
  table: string;
  path: string;
  rows: number;
  sheets?: string[];
}

async function csvRows(path: string): Promise<string[][]> {
  return parse(await readFile(path), { bom: true, relax_column_count: true }) as string[][];
}

async function readWorkbook(path: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  return workbook;
}

/** A sheet's rows as arrays of cell values, the header first. */
function sheetRows(sheet: ExcelJS.Worksheet, columns: number): ExcelJS.CellValue[][] {
  const rows: ExcelJS.CellValue[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row) => {
    rows.push(Array.from({ length: columns }, (_, i) => row.getCell(i + 1).value ?? null));
  });
  return rows;
}

/**
 * A CSV cell as the workbook must hold it, by the kind of the workbook's cell: numbers as numbers,
 * times (the CSV's, in the display time zone with their offset) as that wall time to the second, days
 * as their midnight.
 */
function expectedCell(text: string, header: string, cell: ExcelJS.CellValue): unknown {
  if (text === '') return null;
  // An amount in a text column (a partner's value beside a status) is a number in the sheet too.
  if (typeof cell === 'number' || /^-?\d+\.\d{1,4}$|^-\d+$/.test(text)) return Number(text);
  if (typeof cell === 'boolean') return text === 'true';
  if (cell instanceof Date) {
    // The CSV's time is the wall time in the zone the header names, to the second, with its offset.
    const wall = header.endsWith(`(${ZONE})`) ? Date.parse(`${text.slice(0, 19)}Z`) : Date.parse(`${text}T00:00:00Z`);
    return Math.floor(wall / 1000);
  }
  return text;
}

function actualCell(cell: ExcelJS.CellValue): unknown {
  return cell instanceof Date ? Math.floor(cell.getTime() / 1000) : cell;
}

/** Each row as comparable values, sorted: the charges file's rows come in no particular order. */
function sortedRows(rows: unknown[][]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

describe('reports as workbooks', () => {
  let dir: string;
  let dbPath: string;
  let partnerCsv: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-xlsx-'));
    dbPath = join(dir, 'recon.duckdb');
    partnerCsv = join(dir, 'partner.csv');
    await buildSyntheticWarehouse(dbPath, 3_000, partnerCsv);
    const warehouse = await Warehouse.open(dbPath);
    try {
      await warehouse.run(`UPDATE delivery_failures SET delay_note = $1 WHERE right(order_code, 1) = '3'`, [
        FORMULA_NOTE,
      ]);
      await warehouse.run(`UPDATE delivery_failures SET delay_note = $1 WHERE right(order_code, 1) = '6'`, [
        VIETNAMESE,
      ]);
    } finally {
      await warehouse.close();
    }
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function report(args: string[], format: 'csv' | 'xlsx'): Promise<WrittenFile[]> {
    const out = join(dir, `${args[0]}-${format}`);
    const result = await cli(
      ['report', ...args, '--db', dbPath, ...RANGE, '--format', format, '--out', out, '--json'],
      NOW,
    );
    expect(result.code, result.stderr).toBe(0);
    return (JSON.parse(result.stdout) as { files: WrittenFile[] }).files;
  }

  it.each([
    ['charges', false],
    ['failures', false],
    ['reconcile', true],
  ])(
    'writes the %s report as one workbook with the rows and values of its CSV files',
    async (name, partner) => {
      const args = partner ? [name, '--partner', partnerCsv] : [name];
      const csvFiles = await report(args, 'csv');
      const xlsxFiles = await report(args, 'xlsx');

      // One workbook, a sheet per file; the report's own table last, after its summaries.
      const paths = new Set(xlsxFiles.map((f) => f.path));
      expect([...paths]).toEqual([join(dir, `${name}-xlsx`, `${name}_2026-10-01_2026-12-31.xlsx`)]);
      const ownLast = [...csvFiles.slice(1), csvFiles[0]!].map((f) => f.table);
      expect(xlsxFiles.map((f) => f.table)).toEqual(ownLast);
      const workbook = await readWorkbook(xlsxFiles[0]!.path);
      expect(workbook.worksheets.map((s) => s.name)).toEqual(ownLast);

      for (const csvFile of csvFiles) {
        const [header, ...rows] = await csvRows(csvFile.path);
        const sheet = workbook.getWorksheet(csvFile.table)!;
        const [sheetHeader, ...cells] = sheetRows(sheet, header!.length);
        expect(xlsxFiles.find((f) => f.table === csvFile.table)?.rows).toBe(rows.length);
        expect(cells).toHaveLength(rows.length);

        // Times say their zone in the header (their values below are compared as such); the rest are the CSV's.
        expect(sheetHeader).toEqual(
          header!.map((h, i) => (String(sheetHeader![i]).endsWith(` (${ZONE})`) ? `${h} (${ZONE})` : h)),
        );
        // The header row is frozen, and the filter covers the header and every row.
        expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
        expect(sheet.autoFilter).toBe(`A1:${sheet.getColumn(header!.length).letter}${rows.length + 1}`);

        // A cell's kind is the column's: the kind of its first value.
        const kinds = header!.map((_, i) => cells.find((r) => r[i] !== null)?.[i] ?? null);
        const expected = rows.map((row) =>
          row.map((text, i) => expectedCell(text, String(sheetHeader![i]), kinds[i]!)),
        );
        expect(sortedRows(cells.map((r) => r.map(actualCell)))).toEqual(sortedRows(expected));
      }

      // Money is a number in a VND format, whole dong without decimals, whatever the report.
      const money = {
        charges: ['charges', 'total_service_cost'],
        failures: undefined,
        reconcile: ['reconcile', 'difference'],
      }[name];
      if (money !== undefined) {
        const sheet = workbook.getWorksheet(money[0]!)!;
        const header = sheet.getRow(1).values as string[];
        const column = sheet.getColumn(header.indexOf(money[1]!));
        const values: unknown[] = [];
        column.eachCell((cell, row) => {
          if (row > 1 && cell.value !== null) {
            values.push(cell.value);
            expect(cell.numFmt).toBe(Number.isInteger(cell.value) ? '#,##0 "VND"' : '#,##0.0### "VND"');
          }
        });
        expect(values.length).toBeGreaterThan(0);
        for (const value of values) expect(typeof value).toBe('number');
      }
      if (name === 'failures') {
        const notes = new Set<unknown>();
        const sheet = workbook.getWorksheet('failures')!;
        const note = (sheet.getRow(1).values as unknown[]).indexOf('delay_note');
        sheet.eachRow((row) => {
          notes.add(row.getCell(note).value);
          expect(row.getCell(note).formula).toBeUndefined();
        });
        expect(notes).toContain(`'${FORMULA_NOTE}`);
        expect(notes).toContain(VIETNAMESE);
      }
    },
    120_000,
  );

  it('continues a table on further sheets past the row limit, each with its header, frozen and filtered', async () => {
    expect(SHEET_ROW_LIMIT).toBe(1_048_576);
    const out = join(dir, 'split');
    await mkdir(out);
    const warehouse = await Warehouse.open(join(dir, 'split.duckdb'));
    const texts = [FORMULA_NOTE, '+84 912 345 678 gọi lại', '-1+1 khách vắng nhà', '@SUM(A1:A9)', '\t=1+1', VIETNAMESE];
    let files: Awaited<ReturnType<typeof writeReportTables>>;
    try {
      const notes = texts.map((t) => `'${t.replaceAll("'", "''")}'`).join(', ');
      const query = `SELECT i, CAST(i * 1000.5 AS DECIMAL(20,4)) AS amount, list_value(${notes})[1 + i % ${texts.length}] AS note
                     FROM range(10) AS t(i) ORDER BY i`;
      files = await writeReportTables(warehouse.connection, [{ name: 'notes', query }], {
        outDir: out,
        format: 'xlsx',
        range: { from: '2026-11-01', to: '2026-11-30' },
        sheetRowLimit: 4,
      });
    } finally {
      await warehouse.close();
    }
    expect(files).toEqual([
      {
        table: 'notes',
        path: join(out, 'notes_2026-11-01_2026-11-30.xlsx'),
        rows: 10,
        sheets: ['notes', 'notes (2)', 'notes (3)', 'notes (4)'],
      },
    ]);
    const workbook = await readWorkbook(files[0]!.path);
    expect(workbook.worksheets.map((s) => s.name)).toEqual(['notes', 'notes (2)', 'notes (3)', 'notes (4)']);
    const rows: ExcelJS.CellValue[][] = [];
    for (const sheet of workbook.worksheets) {
      const [header, ...cells] = sheetRows(sheet, 3);
      expect(header).toEqual(['i', 'amount', 'note']);
      expect(cells.length).toBeLessThanOrEqual(3);
      expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
      expect(sheet.autoFilter).toBe(`A1:C${cells.length + 1}`);
      rows.push(...cells);
    }
    expect(rows).toEqual(
      Array.from({ length: 10 }, (_, i) => [
        i,
        i * 1000.5,
        `${i % texts.length === 5 ? '' : "'"}${texts[i % texts.length]}`,
      ]),
    );
  });

  /** The partner's CSV as a workbook's sheet: amounts and statuses as numbers, as a spreadsheet keeps them. */
  async function partnerWorkbook(path: string, sheets: { name: string; rows?: string[][] }[]): Promise<void> {
    const workbook = new ExcelJS.Workbook();
    const lines = await csvRows(partnerCsv);
    for (const { name, rows } of sheets) {
      const sheet = workbook.addWorksheet(name);
      for (const [i, line] of (rows ?? lines).entries())
        sheet.addRow(i === 0 ? line : line.map((v) => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v)));
    }
    await workbook.xlsx.writeFile(path);
  }

  async function findings(partner: string[]): Promise<{ code: number; stderr: string; rows: unknown[] }> {
    const out = join(dir, `reconcile-${partner.join('-').replaceAll('/', '_')}`);
    const result = await cli(
      ['report', 'reconcile', '--db', dbPath, ...RANGE, '--format', 'json', '--out', out, '--json', ...partner],
      NOW,
    );
    if (result.code !== 0) return { code: result.code, stderr: result.stderr, rows: [] };
    const file = fileOf((JSON.parse(result.stdout) as { files: WrittenFile[] }).files, 'reconcile');
    const rows = JSON.parse(await readFile(file.path, 'utf8')) as Record<string, unknown>[];
    // Where a line is: the file's name differs, its line number is the row's.
    return {
      code: 0,
      stderr: '',
      rows: rows.map((r) => ({
        ...r,
        partner_lines: String(r.partner_lines ?? '').replaceAll(/[^,]*\.(csv|xlsx):/g, 'file:'),
      })),
    };
  }

  it('reconciles an .xlsx partner file as the same lines in a CSV; --sheet picks a sheet, an unknown one is one line, exit 2', async () => {
    const lines = await csvRows(partnerCsv);
    // A few lines a partner's sheet has: a duplicate, an amount that is no number, a status by its Vietnamese name.
    const extra = [
      lines[5]!,
      [lines[6]![0]!, '30', 'ba mươi nghìn', ''],
      [lines[7]![0]!, 'Giao thành công', lines[7]![2]!, ''],
    ];
    const csv = join(dir, 'partner-extra.csv');
    await writeFile(csv, stringify([...lines, ...extra]));
    const single = join(dir, 'partner.xlsx');
    await partnerWorkbook(single, [{ name: 'Hóa đơn', rows: [...lines, ...extra] }]);
    const two = join(dir, 'partner-sheets.xlsx');
    await partnerWorkbook(two, [
      { name: 'Ghi chú', rows: [['ghi chú'], ['tháng 11']] },
      { name: 'Hóa đơn', rows: [...lines, ...extra] },
    ]);

    const fromCsv = await findings(['--partner', csv]);
    expect(fromCsv.code).toBe(0);
    expect(fromCsv.rows.length).toBeGreaterThan(60);
    expect(await findings(['--partner', single])).toEqual(fromCsv);
    expect(await findings(['--partner', two, '--sheet', 'Hóa đơn'])).toEqual(fromCsv);

    // The first sheet by default: this one has no order_code column.
    const first = await findings(['--partner', two]);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain('no order_code column');

    const notWorkbook = await findings(['--partner', csv, '--sheet', 'Hóa đơn']);
    expect(notWorkbook.code).toBe(2);
    expect(notWorkbook.stderr).toContain(`--sheet: ${csv} is not a .xlsx workbook`);

    const unknown = await findings(['--partner', two, '--sheet', 'Tháng 12']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toEqual([
      `parcel-recon: partner records ${two}: no sheet "Tháng 12"; its sheets are "Ghi chú", "Hóa đơn"`,
    ]);
  }, 120_000);

  it('compares the charges with invoices from an .xlsx file as with the same CSV', async () => {
    const xlsx = join(dir, 'invoices.xlsx');
    await partnerWorkbook(xlsx, [{ name: 'Sheet1' }]);
    const flags = async (invoices: string) => {
      const files = await report(['charges', '--invoices', invoices], 'csv');
      const [header, ...rows] = await csvRows(files.find((f) => f.table === 'charges')!.path);
      const at = ['order_code', 'invoiced_amount', 'invoice_flag'].map((c) => header!.indexOf(c));
      return rows.map((r) => at.map((i) => r[i])).sort();
    };
    const fromCsv = await flags(partnerCsv);
    expect(fromCsv.filter(([, , flag]) => flag === 'true').length).toBeGreaterThan(0);
    expect(await flags(xlsx)).toEqual(fromCsv);
  }, 120_000);
});
