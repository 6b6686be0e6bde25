/**
 * `payouts import` run as a user runs it, against a real DuckDB file: a statement imported once, then
 * again without change; a corrected batch replacing its lines, the replaced ones kept in the history;
 * a wrong header refused in one line; bad lines rejected line by line while the good ones are kept; a
 * workbook's sheet; a dry run that changes nothing.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';

const HEADER =
  'Mã phiên,Ngày thanh toán,Mã vận đơn,Tiền thu hộ,Cước chính,Phí vùng xa,Phụ phí xăng dầu,VAT,Phí thu hộ,Công nợ trừ,Thực trả,Tổng phiên';

/** Two batches of 247Express's template, amounts written as Vietnamese statements write them. */
const WEEK = [
  HEADER,
  'P1,03/11/2026,EX00001,"1.250.000",30.000,0,"6.000 đ",3.600,10.000,0,"1.200.400₫","2.430.800 VND"',
  'P1,03/11/2026,EX00002,"1,250,000 đ",30000,0,6000,3600,10000,0,1.200.400,2.430.800',
  'P2,10/11/2026,EX00003,500.000,30.000,15.000,0,0,5.000,20.000,430.000,',
].join('\n');

/** P1 again, corrected: EX00001's fee and net paid, and EX00002 no longer in it. */
const P1_CORRECTED = [
  HEADER,
  'P1,03/11/2026,EX00001,"1.250.000",25.000,0,"6.000 đ",3.600,10.000,0,"1.205.400₫","1.205.400 VND"',
].join('\n');

const NOW = '2026-11-28T08:00:00+07:00';

let dir: string;
let db: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parcel-recon-payouts-'));
  db = join(dir, 'recon.duckdb');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

function payouts(...args: string[]) {
  return cli(['payouts', 'import', '--db', db, ...args], { PARCEL_RECON_NOW: NOW });
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const warehouse = await Warehouse.open(db, { readOnly: true });
  try {
    return (await warehouse.readAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    await warehouse.close();
  }
}

/** Every stored line, its fees and the history, as they are. */
async function stored(): Promise<Record<string, unknown>> {
  return {
    lines: await rows('SELECT * FROM payout_lines ORDER BY ALL'),
    fees: await rows('SELECT * FROM payout_line_fees ORDER BY ALL'),
    history: await rows('SELECT * FROM payout_line_history ORDER BY ALL'),
  };
}

/** The lines' figures: batch, order, kind, date, stated total, COD, fees withheld, debts, net paid. */
async function figures(batch?: string): Promise<unknown[][]> {
  const lines = await rows(
    `SELECT batch_id, order_code, line_kind, batch_date, batch_stated_total, cod_collected, fees_withheld, debts, net_paid
     FROM payout_lines ${batch === undefined ? '' : `WHERE batch_id = '${batch}'`} ORDER BY ALL`,
  );
  return lines.map((line) => Object.values(line));
}

describe('payouts import', () => {
  it('imports a statement: each line with its fees by type, in whole VND', async () => {
    const week = await file('week.csv', WEEK);
    const result = await payouts(week);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `payouts ${week} (247express, layout 247express): 3 lines read, 3 imported, 0 unchanged, 0 batches replaced (0 lines to history), 0 rejected\n`,
    );
    expect(await figures()).toEqual([
      ['P1', 'EX00001', 'cod', '2026-11-03', '2430800', '1250000', '49600', '0', '1200400'],
      ['P1', 'EX00002', 'cod', '2026-11-03', '2430800', '1250000', '49600', '0', '1200400'],
      ['P2', 'EX00003', 'cod', '2026-11-10', null, '500000', '50000', '20000', '430000'],
    ]);
    expect(
      await rows("SELECT fee_type, amount FROM payout_line_fees WHERE order_code = 'EX00003' ORDER BY fee_type"),
    ).toEqual([
      { fee_type: 'cod', amount: '5000' },
      { fee_type: 'remote_area', amount: '15000' },
      { fee_type: 'shipping', amount: '30000' },
    ]);
  });

  it('imported again changes nothing', async () => {
    const before = await stored();
    const result = await payouts(join(dir, 'week.csv'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      ': 3 lines read, 0 imported, 3 unchanged, 0 batches replaced (0 lines to history), 0 rejected\n',
    );
    expect(await stored()).toEqual(before);
  });

  it('with --dry-run tells what a corrected statement would change, and changes nothing', async () => {
    const before = await stored();
    const imports = await rows('SELECT count(*) AS n FROM payout_imports');
    const corrected = await file('p1-corrected.csv', P1_CORRECTED);
    const result = await payouts(corrected, '--dry-run');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `dry run, nothing changed: payouts ${corrected} (247express, layout 247express): 1 line read, 1 would be imported, 0 unchanged, 1 batch would be replaced (2 lines to history), 0 rejected\n`,
    );
    expect(await stored()).toEqual(before);
    expect(await rows('SELECT count(*) AS n FROM payout_imports')).toEqual(imports);
  });

  it('replaces a batch with its corrected statement, keeping the lines it replaced in the history', async () => {
    const corrected = join(dir, 'p1-corrected.csv');
    const result = await payouts(corrected);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      ': 1 line read, 1 imported, 0 unchanged, 1 batch replaced (2 lines to history), 0 rejected\n',
    );
    expect(await figures()).toEqual([
      ['P1', 'EX00001', 'cod', '2026-11-03', '1205400', '1250000', '44600', '0', '1205400'],
      ['P2', 'EX00003', 'cod', '2026-11-10', null, '500000', '50000', '20000', '430000'],
    ]);
    const [replacing] = await rows(`SELECT import_id FROM payout_lines WHERE order_code = 'EX00001'`);
    expect(
      await rows(
        `SELECT order_code, net_paid, fees, origin, replaced_by_import FROM payout_line_history ORDER BY order_code`,
      ),
    ).toEqual([
      {
        order_code: 'EX00001',
        net_paid: '1200400',
        fees: '{"cod":10000,"fuel":6000,"shipping":30000,"vat":3600}',
        origin: `${join(dir, 'week.csv')}:2`,
        replaced_by_import: replacing!.import_id,
      },
      {
        order_code: 'EX00002',
        net_paid: '1200400',
        fees: '{"cod":10000,"fuel":6000,"shipping":30000,"vat":3600}',
        origin: `${join(dir, 'week.csv')}:3`,
        replaced_by_import: replacing!.import_id,
      },
    ]);
  });

  it('refuses a file whose header does not fit its layout in one line naming the missing columns', async () => {
    const before = await stored();
    const wrong = await file(
      'wrong.csv',
      'Mã phiên,Ngày thanh toán,Mã vận đơn,COD,Thực trả\nP9,03/11/2026,EX00009,1,1\n',
    );
    const result = await payouts(wrong);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `parcel-recon: ${wrong}: the header does not fit layout 247express: it lacks "Tiền thu hộ", "Công nợ trừ", "Cước chính", "Phí vùng xa", "Phụ phí xăng dầu", "VAT", "Phí thu hộ"; its columns are "Mã phiên", "Ngày thanh toán", "Mã vận đơn", "COD", "Thực trả": nothing was imported; give --layout the layout the statement is written in, or map its columns in the configuration (payouts.layouts)\n`,
    );
    expect(await stored()).toEqual(before);
  });

  it('rejects text in a money column and a torn last line line by line, keeping the good lines and every stored one', async () => {
    const torn = await file(
      'torn.csv',
      [
        HEADER,
        'P2,10/11/2026,EX00003,năm trăm nghìn,30.000,15.000,0,0,5.000,20.000,430.000,',
        'P2,10/11/2026,EX00004,200.000,30.000,0,0,0,2.000,0,168.000,',
        'P3,11/11/2026,EX00005,300.000,30.000,0,0,0,3.000,0,267.000,',
        'P3,11/11/2026,EX00006,"300.0',
      ].join('\n'),
    );
    const result = await payouts(torn);
    expect(result.code, result.stderr).toBe(0);
    const [line, ...rejections] = result.stdout.trimEnd().split('\n');
    const rejects = line!.split('; rejects ')[1]!;
    expect(line).toBe(
      `payouts ${torn} (247express, layout 247express): 4 lines read, 2 imported, 0 unchanged, 0 batches replaced (0 lines to history), 2 rejected; rejects ${rejects}`,
    );
    expect(rejections).toEqual([
      `  ${torn}:2: column "Tiền thu hộ": "năm trăm nghìn" is not an amount of VND`,
      `  ${torn}:5: Quote Not Closed: the parsing is finished with an opening quote at line 5`,
    ]);
    expect(rejects).toMatch(/^.*\/rejects\/payouts-20261128T010000Z-[0-9a-f]{6}\.csv$/);
    expect((await readFile(rejects, 'utf8')).replace(/^\uFEFF/, '')).toBe(
      [
        'origin,order_code,reject_code,reason',
        `${torn}:2,EX00003,BAD_VALUE,"column ""Tiền thu hộ"": ""năm trăm nghìn"" is not an amount of VND"`,
        `${torn}:5,,UNREADABLE_ROW,Quote Not Closed: the parsing is finished with an opening quote at line 5`,
        '',
      ].join('\n'),
    );
    // EX00003's rejected line may be a correction: the stored line stays, as P2's new line comes in.
    expect(await figures('P2')).toEqual([
      ['P2', 'EX00003', 'cod', '2026-11-10', null, '500000', '50000', '20000', '430000'],
      ['P2', 'EX00004', 'cod', '2026-11-10', null, '200000', '32000', '0', '168000'],
    ]);
    expect(await figures('P3')).toEqual([
      ['P3', 'EX00005', 'cod', '2026-11-11', null, '300000', '33000', '0', '267000'],
    ]);
  });

  it("reads a workbook's named sheet in GHN's template, its money and dates as cells", async () => {
    const book = new ExcelJS.Workbook();
    book.addWorksheet('Tóm tắt').addRow(['Phiên', 'Tổng']);
    const sheet = book.addWorksheet('Chi tiết');
    sheet.addRow([
      'MÃ PHIÊN COD',
      'Ngày chuyển COD',
      'Mã đơn GHN',
      'Loại giao dịch',
      'Tiền thu hộ',
      'Phí dịch vụ',
      'Phí khai giá',
      'Phí thu hộ',
      'Phí hoàn hàng',
      'Phí giao lại',
      'Công nợ',
      'Thực nhận',
    ]);
    sheet.addRow([
      'G1',
      new Date(Date.UTC(2026, 10, 12)),
      'GA0001',
      'Thu hộ',
      800_000,
      22_000,
      4_000,
      0,
      0,
      0,
      0,
      774_000,
    ]);
    sheet.addRow(['G1', new Date(Date.UTC(2026, 10, 12)), 'GA0002', 'Công nợ', 0, 0, 0, 0, 18_000, 0, 18_000, -18_000]);
    sheet.addRow(['G1', new Date(Date.UTC(2026, 10, 12)), 'GA0003', 'Thu hộ', 'tám trăm', 0, 0, 0, 0, 0, 0, 0]);
    const workbook = join(dir, 'ghn.xlsx');
    await book.xlsx.writeFile(workbook);

    const result = await payouts(workbook, '--carrier', 'ghn', '--sheet', 'Chi tiết');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(
      new RegExp(
        `^payouts ${workbook} \\(ghn, layout ghn\\): 3 lines read, 2 imported, 0 unchanged, 0 batches replaced \\(0 lines to history\\), 1 rejected; rejects `,
      ),
    );
    expect(result.stdout.split('\n')[1]).toBe(
      `  ${workbook}:4: column "Tiền thu hộ": "tám trăm" is not an amount of VND`,
    );
    expect(
      await rows(
        `SELECT carrier, batch_id, order_code, line_kind, batch_date, cod_collected, fees_withheld, debts, net_paid
         FROM payout_lines WHERE carrier = 'ghn' ORDER BY order_code`,
      ),
    ).toEqual([
      {
        carrier: 'ghn',
        batch_id: 'G1',
        order_code: 'GA0001',
        line_kind: 'cod',
        batch_date: '2026-11-12',
        cod_collected: '800000',
        fees_withheld: '26000',
        debts: '0',
        net_paid: '774000',
      },
      {
        carrier: 'ghn',
        batch_id: 'G1',
        order_code: 'GA0002',
        line_kind: 'debt',
        batch_date: '2026-11-12',
        cod_collected: '0',
        fees_withheld: '18000',
        debts: '18000',
        net_paid: '-18000',
      },
    ]);
  });

  it('names the sheets of a workbook that has not the one asked for, in one line', async () => {
    const result = await payouts(join(dir, 'ghn.xlsx'), '--carrier', 'ghn', '--sheet', 'Sheet1');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe(
      `parcel-recon: ${join(dir, 'ghn.xlsx')}: no sheet "Sheet1"; its sheets are "Tóm tắt", "Chi tiết"\n`,
    );
  });

  it("reads any other layout through a mapping of the user's own in the configuration", async () => {
    const config = await file(
      'parcel-recon.config.json',
      JSON.stringify({
        payouts: {
          layouts: {
            'shop-export': {
              carrier: 'ghn',
              columns: {
                batchId: 'Session',
                batchDate: 'Paid on',
                orderCode: ['Waybill', 'Order'],
                codCollected: 'Collected',
                debts: 'Debts',
                netPaid: 'Net',
              },
              fees: { Freight: 'shipping', 'Freight surcharge': 'shipping', Returns: 'return' },
            },
          },
        },
      }),
    );
    const statement = await file(
      'shop.csv',
      'Session;Paid on;Order;Collected;Freight;Freight surcharge;Returns;Debts;Net\nS7;2026-11-14;GB0001;1.000.000 đ;20.000;5.000;0;0;975.000\n',
    );
    const result = await payouts(statement, '--config', config, '--layout', 'shop-export');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `payouts ${statement} (ghn, layout shop-export): 1 line read, 1 imported, 0 unchanged, 0 batches replaced (0 lines to history), 0 rejected\n`,
    );
    expect(await figures('S7')).toEqual([
      ['S7', 'GB0001', 'cod', '2026-11-14', null, '1000000', '25000', '0', '975000'],
    ]);
    expect(await rows("SELECT carrier, fee_type, amount FROM payout_line_fees WHERE batch_id = 'S7'")).toEqual([
      { carrier: 'ghn', fee_type: 'shipping', amount: '25000' },
    ]);

    const unknown = await payouts(statement, '--config', config, '--layout', 'shop');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'parcel-recon: layout shop: no such layout; the layouts are 247express, ghn, shop-export\n',
    );
  });

  it('refuses a layout of the configuration that takes the name of a template', async () => {
    const config = await file(
      'taken.config.json',
      JSON.stringify({
        payouts: {
          layouts: {
            ghn: { columns: { batchId: 'a', batchDate: 'b', orderCode: 'c', codCollected: 'd', netPaid: 'e' } },
          },
        },
      }),
    );
    const result = await payouts(join(dir, 'shop.csv'), '--config', config);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'parcel-recon: payouts.layouts.ghn: ghn is the name of a template; give your layout another name\n',
    );
  });
});
