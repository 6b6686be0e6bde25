/**
 * Order codes and quote requests from an `.xlsx` workbook, read by exceljs' streaming reader: the
 * header is the first row with a value, each row's origin its number in the sheet; an empty code or
 * an error cell is a rejection of that row alone; a missing file, sheet or column is one line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PriceInput, tablePriceRequests } from '../../src/pipeline/price-inputs.js';
import { xlsxSource } from '../../src/sources/xlsx-source.js';
import { readItems, sourceErrorOf } from '../support/source-reading.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xlsx-source-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a workbook of the given sheets, each row's cells from column A. */
async function workbook(name: string, sheets: Record<string, ExcelJS.CellValue[][]>): Promise<string> {
  const book = new ExcelJS.Workbook();
  for (const [sheetName, rows] of Object.entries(sheets)) {
    const sheet = book.addWorksheet(sheetName);
    rows.forEach((cells, index) => {
      sheet.getRow(index + 1).values = cells;
    });
  }
  const path = join(dir, name);
  await book.xlsx.writeFile(path);
  return path;
}

describe('xlsxSource', () => {
  it('reads codes and accounts by header name, rejecting empty codes and error cells by row', async () => {
    const file = await workbook('orders.xlsx', {
      Notes: [['nothing here']],
      Orders: [
        [],
        ['Shop', ' Account ', 'OrderCode'],
        ['a', 'hanoi-shop', ' EX100000001 '],
        ['b', null, 'EX100000002'],
        [],
        ['c', 'hanoi-shop', null],
        ['d', 'hanoi-shop', { error: '#N/A' }],
        ['e', { error: '#DIV/0!' }, 'EX100000003'],
        ['f', { formula: 'LOWER("DANANG-SHOP")', result: 'danang-shop' }, 100000004],
      ],
    });
    const items = await readItems(xlsxSource(file, 'Orders'));
    expect(items).toEqual([
      { kind: 'code', code: { orderCode: 'EX100000001', account: 'hanoi-shop', origin: `${file}:3` } },
      { kind: 'code', code: { orderCode: 'EX100000002', account: null, origin: `${file}:4` } },
      { kind: 'rejected', rejection: { origin: `${file}:6`, reason: 'order_code is null', text: null } },
      {
        kind: 'rejected',
        rejection: { origin: `${file}:7`, reason: 'cell C7 (OrderCode) holds #N/A', text: null },
      },
      {
        kind: 'rejected',
        rejection: { origin: `${file}:8`, reason: 'cell B8 (Account) holds #DIV/0!', text: null },
      },
      { kind: 'code', code: { orderCode: '100000004', account: 'danang-shop', origin: `${file}:9` } },
    ]);
  });

  it('names a missing file, sheet or order_code column, and a file that is no workbook, in one line', async () => {
    const file = await workbook('two-sheets.xlsx', { Notes: [['note']], 'Đơn hàng': [['code'], ['EX100000001']] });
    expect((await sourceErrorOf(xlsxSource(join(dir, 'none.xlsx')))).message).toBe(
      `${join(dir, 'none.xlsx')}: no such file`,
    );
    expect((await sourceErrorOf(xlsxSource(file, 'Tháng 12'))).message).toBe(
      `${file}: no sheet "Tháng 12"; its sheets are "Notes", "Đơn hàng"`,
    );
    expect((await sourceErrorOf(xlsxSource(file, 'Đơn hàng'))).message).toBe(
      `${file} has no order_code column; its columns are "code"`,
    );
    const notWorkbook = join(dir, 'orders-really.xlsx');
    await writeFile(notWorkbook, 'order_code\nEX100000001\n');
    const message = (await sourceErrorOf(xlsxSource(notWorkbook))).message;
    expect(message).toMatch(new RegExp(`^${notWorkbook.replace(/[.]/g, '\\.')}: not a readable \\.xlsx workbook`));
    expect(message).not.toContain('\n');
  });

  it('skips the sheets before the one asked for, or all of them for a missing one, leaving no stray read behind', async () => {
    const rows = (n: number) => [
      ['order_code'],
      ...Array.from({ length: n }, (_, i) => [`EX${String(i).padStart(9, '0')}`]),
    ];
    const file = await workbook('three-sheets.xlsx', {
      'Tóm tắt': rows(300),
      'Chi tiết': rows(300),
      'Đơn hàng': rows(3),
    });
    // ExcelJS parks a sheet read before the shared strings in a temporary file: one left unread was
    // opened after its removal, now and then, an error event that ended the process.
    for (let i = 0; i < 200; i++)
      expect((await sourceErrorOf(xlsxSource(file, 'Sheet1'))).message).toBe(
        `${file}: no sheet "Sheet1"; its sheets are "Tóm tắt", "Chi tiết", "Đơn hàng"`,
      );
    expect(await readItems(xlsxSource(file, 'Chi tiết'))).toHaveLength(300);
  });
});

describe('quote requests from a workbook', () => {
  it('reads the request columns, refusing an invalid row and a row with an error cell with their reasons', async () => {
    const header = ['order_code', 'ToProvinceName', 'ToDistrictName', 'ToWardName', 'Length', 'Width', 'Height'];
    const file = await workbook('quotes.xlsx', {
      Quotes: [
        [...header, 'RealWeight', 'ClientHubID', 'ServiceTypeID'],
        ['EX100000001', 'Hà Nội', 'Quận Ba Đình', 'Phường Kim Mã', 10, 20.5, 30, 1.25, 'HNI-HUB-1', 'DE'],
        ['EX100000002', 'Hà Nội', 'Quận Ba Đình', 'Phường Kim Mã', 10, 'wide', 30, 1.25, 'HNI-HUB-1', 'DE'],
        ['EX100000003', { error: '#REF!' }, 'Quận Ba Đình', 'Phường Kim Mã', 10, 20, 30, 1, 'HNI-HUB-1', 'DE'],
      ],
    });
    const items: PriceInput[] = [];
    for await (const item of tablePriceRequests({ kind: 'xlsx', file }).items()) items.push(item);
    expect(items).toEqual([
      {
        kind: 'request',
        request: {
          toProvinceName: 'Hà Nội',
          toDistrictName: 'Quận Ba Đình',
          toWardName: 'Phường Kim Mã',
          length: 10,
          width: 20.5,
          height: 30,
          realWeight: 1.25,
          clientHubId: 'HNI-HUB-1',
          serviceTypeId: 'DE',
        },
        orderCode: 'EX100000001',
        account: null,
        origin: `${file}:2`,
      },
      { kind: 'rejected', origin: `${file}:3`, orderCode: 'EX100000002', reason: 'Width is not a number' },
      { kind: 'rejected', origin: `${file}:4`, orderCode: null, reason: 'cell B4 (ToProvinceName) holds #REF!' },
    ]);
  });
});
