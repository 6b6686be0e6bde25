/**
 * Report CSV files are written by DuckDB's COPY, each cell built in SQL as csv-stringify writes it: the
 * bytes of a file of tricky values (quotes, commas, line breaks, Vietnamese text, text that starts a
 * formula, a negative number, nulls and empty text, money decimals, times in the display time zone)
 * are exactly the expected ones, and what csv-stringify gives for the same values as text.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDisplayTime } from '../../src/reports/display-time.js';
import { writeReportTables } from '../../src/reports/writers/report-writer.js';
import { formulaSafeText } from '../../src/warehouse/formula-safe-text.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';

/** Each row: a text, a money amount, a flag, a time. */
const ROWS: readonly [string | null, string | null, boolean | null, string | null][] = [
  ['plain', '1184800.0000', true, '2026-11-03 08:15:00+07'],
  ['Khách hẹn "giao lại", sáng mai', '12.5000', false, '2026-11-03 23:59:59.5+07'],
  ['dòng một\ndòng hai', '-5000.0000', null, null],
  ['cr\rhere', '0.0001', true, '2026-11-01 00:00:00+07'],
  ['=HYPERLINK("http://evil.example","x")', '99999999999999.9999', false, '2026-11-30 12:00:00+07'],
  ['+84 912 345 678', null, true, '2026-11-02 01:02:03+07'],
  ['-1 khách vắng', '-0.5000', true, '2026-11-02 01:02:03+07'],
  ['@SUM(A1)', '0.0000', false, '2026-11-02 01:02:03+07'],
  ['\t=1', '1.0000', false, '2026-11-02 01:02:03+07'],
  ['Bưu cục #3; Đống Đa', '30000.0000', false, '2026-11-02 01:02:03+07'],
  ['', '7.1000', false, '2026-11-02 01:02:03+07'],
  [null, null, null, null],
  ["'quoted already", '2.0000', true, '2026-11-02 01:02:03+07'],
  // Past 18 digits: the one amount converted to text from its full 128 bits.
  ['vượt mức', '-1234567890123456.7890', true, '2026-11-02 01:02:03+07'],
  ['trước 1970', '3.0000', false, '1969-12-31 23:59:59.999+00'],
  ['vô hạn', '4.0000', false, 'infinity'],
  // A negative number is a number to a spreadsheet, never a formula.
  ['-5.0000', '-5.0000', true, '2026-07-01 12:00:00+07'],
];

const EXPECTED = [
  '\uFEFFno,note,amount,ok,seen_at\n',
  '1,plain,1184800.0000,true,2026-11-03T08:15:00+07:00\n',
  '2,"Khách hẹn ""giao lại"", sáng mai",12.5000,false,2026-11-03T23:59:59+07:00\n',
  '3,"dòng một\ndòng hai",-5000.0000,,\n',
  '4,"cr\rhere",0.0001,true,2026-11-01T00:00:00+07:00\n',
  `5,"'=HYPERLINK(""http://evil.example"",""x"")",99999999999999.9999,false,2026-11-30T12:00:00+07:00\n`,
  "6,'+84 912 345 678,,true,2026-11-02T01:02:03+07:00\n",
  "7,'-1 khách vắng,-0.5000,true,2026-11-02T01:02:03+07:00\n",
  "8,'@SUM(A1),0.0000,false,2026-11-02T01:02:03+07:00\n",
  "9,'\t=1,1.0000,false,2026-11-02T01:02:03+07:00\n",
  '10,Bưu cục #3; Đống Đa,30000.0000,false,2026-11-02T01:02:03+07:00\n',
  '11,,7.1000,false,2026-11-02T01:02:03+07:00\n',
  '12,,,,\n',
  "13,'quoted already,2.0000,true,2026-11-02T01:02:03+07:00\n",
  '14,vượt mức,-1234567890123456.7890,true,2026-11-02T01:02:03+07:00\n',
  // Saigon kept UTC+08:00 from 1959 to 1975.
  '15,trước 1970,3.0000,false,1970-01-01T07:59:59+08:00\n',
  '16,vô hạn,4.0000,false,infinity\n',
  '17,-5.0000,-5.0000,true,2026-07-01T12:00:00+07:00\n',
].join('');

describe('report CSV written by COPY', () => {
  let dir: string;
  let warehouse: Warehouse;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-csv-copy-'));
    warehouse = await Warehouse.open(join(dir, 'recon.duckdb'));
    await warehouse.run(
      'CREATE TABLE tricky (no INTEGER, note VARCHAR, amount DECIMAL(20,4), ok BOOLEAN, seen_at TIMESTAMPTZ)',
    );
    for (const [i, [note, amount, ok, seenAt]] of ROWS.entries())
      await warehouse.run(
        'INSERT INTO tricky VALUES ($1, $2, CAST($3 AS DECIMAL(20,4)), $4, CAST($5 AS TIMESTAMPTZ))',
        [i + 1, note, amount, ok, seenAt],
      );
  });

  afterAll(async () => {
    await warehouse?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function written(query: string, anyOrder = false): Promise<string> {
    const [file] = await writeReportTables(warehouse.connection, [{ name: 'tricky', query, anyOrder }], {
      outDir: dir,
      format: 'csv',
      range: { from: '2026-11-01', to: '2026-11-30' },
    });
    expect(file!.rows).toBe(ROWS.length);
    return readFile(file!.path, 'utf8');
  }

  it('writes the expected bytes: header, byte order mark, quoting, formula-safe text, nulls, money', async () => {
    expect(await written('SELECT * FROM tricky ORDER BY no')).toBe(EXPECTED);
  });

  it('writes what csv-stringify writes for the same values as text', async () => {
    const text = (await warehouse.readAll('SELECT * FROM tricky ORDER BY no')).getRows();
    const asText = (
      await warehouse.readAll(
        'SELECT CAST(amount AS VARCHAR), CAST(seen_at AS VARCHAR), CASE WHEN isfinite(seen_at) THEN epoch_ms(seen_at) END FROM tricky ORDER BY no',
      )
    ).getRows();
    const rows = text.map((row, i) => {
      const [amount, time, ms] = asText[i]! as [string | null, string | null, bigint | null];
      return [
        String(row[0]),
        row[1] === null ? null : formulaSafeText(String(row[1])),
        amount,
        row[3] === null ? null : String(row[3]),
        ms === null ? time : formatDisplayTime(Number(ms), 'Asia/Ho_Chi_Minh'),
      ];
    });
    const stringified = stringify(rows, {
      bom: true,
      header: true,
      columns: ['no', 'note', 'amount', 'ok', 'seen_at'],
    });
    expect(await written('SELECT * FROM tricky ORDER BY no')).toBe(stringified);
  });

  it('keeps the rows of an ordered query of many chunks in their order', async () => {
    await warehouse.run(
      "CREATE TABLE many AS SELECT i AS no, CAST(i % 7 AS VARCHAR) || ' x' AS note FROM range(300000) AS t(i)",
    );
    const [file] = await writeReportTables(
      warehouse.connection,
      [{ name: 'many', query: 'SELECT * FROM many ORDER BY no DESC' }],
      { outDir: dir, format: 'csv', range: { from: '2026-11-01', to: '2026-11-30' } },
    );
    const numbers = (await readFile(file!.path, 'utf8'))
      .split('\n')
      .slice(1, -1)
      .map((line) => Number(line.split(',')[0]));
    expect(numbers).toEqual(Array.from({ length: 300_000 }, (_, i) => 299_999 - i));
  });

  it('writes every row once when the rows may come in any order', async () => {
    const lines = (await written('SELECT * FROM tricky', true)).slice(1).split(/\n(?=\d+,)/);
    expect(lines.slice(1).sort()).toEqual(
      EXPECTED.slice(1)
        .split(/\n(?=\d+,)/)
        .slice(1)
        .sort(),
    );
  });
});
