/**
 * Payout statements read through a layout: headers matched in any case and without diacritics, the
 * file refused in one line when its header lacks a column, each bad line rejected with its reason.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fitHeader,
  headerKey,
  PayoutLayoutSchema,
  payoutLayout,
  TEMPLATE_LAYOUTS,
} from '../../src/sources/payout-layouts.js';
import {
  readStatementDate,
  StatementError,
  type StatementItem,
  statementLines,
} from '../../src/sources/payout-statement-lines.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payout-statement-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const EXPRESS = payoutLayout('247express', TEMPLATE_LAYOUTS.get('247express')!);
const GHN = payoutLayout('ghn', TEMPLATE_LAYOUTS.get('ghn')!);
const EXPRESS_HEADER =
  'Mã phiên,Ngày thanh toán,Mã vận đơn,Tiền thu hộ,Cước chính,Phí vùng xa,Phụ phí xăng dầu,VAT,Phí thu hộ,Công nợ trừ,Thực trả';

async function statement(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function itemsOf(file: string, layout = EXPRESS): Promise<StatementItem[]> {
  const items: StatementItem[] = [];
  for await (const item of statementLines({ kind: 'csv', file }, layout)) items.push(item);
  return items;
}

describe('headers', () => {
  it('are one header whatever their case, diacritics, blanks and punctuation', () => {
    expect(headerKey('Tiền thu hộ')).toBe('tien thu ho');
    expect(headerKey('TIỀN THU HỘ')).toBe('tien thu ho');
    expect(headerKey('tien_thu_ho')).toBe('tien thu ho');
    expect(headerKey('  Công nợ  trừ ')).toBe('cong no tru');
    expect(headerKey('Mã đơn GHN')).toBe('ma don ghn');
  });

  it("fit a template by any of a column's spellings, in any order", () => {
    const fit = fitHeader(EXPRESS, [
      'THUC TRA',
      'ma bang ke',
      'Ngày chuyển tiền',
      'Mã đơn hàng',
      'tiền cod',
      'Công nợ',
      'Cước chính',
      'Phí vùng xa',
      'Phụ phí xăng dầu',
      'vat',
      'Phí thu hộ',
      'Tổng phiên',
    ]);
    expect(fit).toEqual({
      ok: true,
      columns: {
        fields: {
          netPaid: 0,
          batchId: 1,
          batchDate: 2,
          orderCode: 3,
          codCollected: 4,
          debts: 5,
          batchTotal: 11,
        },
        fees: [
          { index: 6, header: 'Cước chính', type: 'shipping' },
          { index: 7, header: 'Phí vùng xa', type: 'remote_area' },
          { index: 8, header: 'Phụ phí xăng dầu', type: 'fuel' },
          { index: 9, header: 'vat', type: 'vat' },
          { index: 10, header: 'Phí thu hộ', type: 'cod' },
        ],
      },
    });
  });

  it('that lack columns name each one missing, by its first spelling', () => {
    expect(fitHeader(GHN, ['Mã phiên COD', 'Mã đơn GHN', 'Tiền thu hộ', 'Phí dịch vụ'])).toEqual({
      ok: false,
      missing: [
        'Ngày chuyển COD',
        'Công nợ',
        'Thực nhận',
        'Phí khai giá',
        'Phí thu hộ',
        'Phí hoàn hàng',
        'Phí giao lại',
      ],
    });
  });
});

describe("a user's layout", () => {
  it('maps any headers, several fee columns to one type, and needs only what it names', async () => {
    const layout = payoutLayout(
      'shop',
      PayoutLayoutSchema.parse({
        carrier: 'ghn',
        columns: {
          batchId: 'Session',
          batchDate: 'Paid on',
          orderCode: 'Waybill',
          codCollected: 'COD',
          netPaid: 'Net',
        },
        fees: { Freight: 'shipping', 'Freight extra': 'shipping', Returns: 'return' },
      }),
    );
    const file = await statement(
      'shop.csv',
      'Session;Paid on;Waybill;COD;Freight;Freight extra;Returns;Net\nS1;2026-11-03;GA1;500.000;20.000;5.000;0;475.000\n',
    );
    const [item] = await itemsOf(file, layout);
    expect(item).toEqual({
      kind: 'line',
      line: {
        origin: `${file}:2`,
        batchId: 'S1',
        batchDate: '2026-11-03',
        orderCode: 'GA1',
        lineKind: 'cod',
        codCollected: 500_000,
        fees: new Map([['shipping', 25_000]]),
        debts: 0,
        netPaid: 475_000,
        batchTotal: null,
      },
    });
  });

  it('is refused when it lacks a column every line needs, or names a fee type the product does not know', () => {
    expect(PayoutLayoutSchema.safeParse({ columns: { batchId: 'a' } }).success).toBe(false);
    expect(
      PayoutLayoutSchema.safeParse({
        columns: { batchId: 'a', batchDate: 'b', orderCode: 'c', codCollected: 'd', netPaid: 'e' },
        fees: { x: 'tips' },
      }).success,
    ).toBe(false);
  });
});

describe('batch dates', () => {
  it('are read as statements write them, as a calendar day', () => {
    expect(readStatementDate('2026-11-03')).toBe('2026-11-03');
    expect(readStatementDate('2026-11-03 14:05:00')).toBe('2026-11-03');
    expect(readStatementDate('03/11/2026')).toBe('2026-11-03');
    expect(readStatementDate('3-11-2026 08:00')).toBe('2026-11-03');
    expect(readStatementDate('31/11/2026')).toBeUndefined();
    expect(readStatementDate('11/2026')).toBeUndefined();
    expect(readStatementDate('hôm qua')).toBeUndefined();
  });
});

describe('statement lines', () => {
  it('read amounts, fees by type, the kind of line and the stated total', async () => {
    const file = await statement(
      'good.csv',
      `${EXPRESS_HEADER},Loại dòng,Tổng phiên\n` +
        'P1,03/11/2026,EX00001,"1.250.000",30.000,0,"6.000 đ",3.600,10.000,0,"1.200.400₫",,"1.150.400 VND"\n' +
        'P1,03/11/2026,EX00002,0,0,0,0,0,0,"50,000",-50.000,Công nợ,1.150.400\n',
    );
    const lines = (await itemsOf(file)).map((item) => (item.kind === 'line' ? item.line : item));
    expect(lines).toEqual([
      expect.objectContaining({
        orderCode: 'EX00001',
        lineKind: 'cod',
        codCollected: 1_250_000,
        fees: new Map([
          ['shipping', 30_000],
          ['fuel', 6_000],
          ['vat', 3_600],
          ['cod', 10_000],
        ]),
        netPaid: 1_200_400,
        batchTotal: 1_150_400,
      }),
      expect.objectContaining({ orderCode: 'EX00002', lineKind: 'debt', debts: 50_000, netPaid: -50_000 }),
    ]);
  });

  it('reject text in a money column, a bad date, an unknown kind and a torn last line, and keep the good ones', async () => {
    const file = await statement(
      'bad.csv',
      `${EXPRESS_HEADER},Loại dòng\n` +
        'P1,03/11/2026,EX00001,100.000,20000,0,0,0,0,0,80000,\n' +
        'P1,03/11/2026,EX00002,một trăm,20000,0,0,0,0,0,80.000 đ,\n' +
        'P1,32/11/2026,EX00003,100000,20000,0,0,0,0,0,1.5,\n' +
        'P1,03/11/2026,EX00004,100000,20000,0,0,0,0,0,80000,tips\n' +
        'P1,03/11/2026,EX00005,100000,20000,0,0,0,0,0,80000,\n' +
        'P1,03/11/2026,EX00006,100.0',
    );
    const items = await itemsOf(file);
    expect(items.map((item) => (item.kind === 'line' ? item.line.orderCode : item))).toEqual([
      'EX00001',
      {
        kind: 'rejected',
        code: 'BAD_VALUE',
        orderCode: 'EX00002',
        rejection: {
          origin: `${file}:3`,
          reason: 'column "Tiền thu hộ": "một trăm" is not an amount of VND',
          text: null,
        },
      },
      {
        kind: 'rejected',
        code: 'BAD_VALUE',
        orderCode: 'EX00003',
        rejection: {
          origin: `${file}:4`,
          reason: 'column "Ngày thanh toán": "32/11/2026" is not a date; column "Thực trả": "1.5" is not whole VND',
          text: null,
        },
      },
      {
        kind: 'rejected',
        code: 'BAD_VALUE',
        orderCode: 'EX00004',
        rejection: {
          origin: `${file}:5`,
          reason:
            'column "Loại dòng": "tips" is not a kind of line (cod, debt, refund, adjustment, or their Vietnamese names)',
          text: null,
        },
      },
      'EX00005',
      {
        kind: 'rejected',
        code: 'UNREADABLE_ROW',
        orderCode: null,
        rejection: {
          origin: `${file}:7`,
          reason: 'the row has 4 fields, the header 12',
          text: 'P1,03/11/2026,EX00006,100.0',
        },
      },
    ]);
  });

  it('of a file whose header does not fit are refused whole, in one line naming what it lacks', async () => {
    const file = await statement('wrong.csv', 'Mã phiên,Mã vận đơn,Tiền thu hộ,Thực trả\nP1,EX1,1,1\n');
    const refusal = await itemsOf(file).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(StatementError);
    expect(refusal).toMatchObject({
      code: 'STATEMENT_HEADER_MISMATCH',
      message: `${file}: the header does not fit layout 247express: it lacks "Ngày thanh toán", "Công nợ trừ", "Cước chính", "Phí vùng xa", "Phụ phí xăng dầu", "VAT", "Phí thu hộ"; its columns are "Mã phiên", "Mã vận đơn", "Tiền thu hộ", "Thực trả"`,
    });
  });

  it('of a file that is not there are refused in one line', async () => {
    await expect(itemsOf(join(dir, 'none.csv'))).rejects.toMatchObject({
      code: 'STATEMENT_UNREADABLE',
      message: `cannot read ${join(dir, 'none.csv')}: no such file`,
    });
  });
});

describe('the sample statements', () => {
  /** Each sample line's net paid is its COD less its fees and debts, and its batch's lines sum to the stated total. */
  async function checkSample(file: string, layout: typeof EXPRESS, lines: number): Promise<void> {
    const items = await itemsOf(join(import.meta.dirname, '../../data/samples', file), layout);
    expect(items.filter((item) => item.kind === 'rejected')).toEqual([]);
    const read = items.flatMap((item) => (item.kind === 'line' ? [item.line] : []));
    expect(read).toHaveLength(lines);
    for (const line of read) {
      const fees = [...line.fees.values()].reduce((sum, amount) => sum + amount, 0);
      expect(line.netPaid, line.origin).toBe(line.codCollected - fees - line.debts);
    }
    expect(read.reduce((sum, line) => sum + line.netPaid, 0)).toBe(read[0]!.batchTotal);
  }

  it("are read whole with their carrier's template, and add up", async () => {
    await checkSample('payouts-247express.csv', EXPRESS, 3);
    await checkSample('payouts-ghn.csv', GHN, 4);
  });
});
