/**
 * Text from the carrier or a partner's file that starts like a formula (`=`, `+`, `-`, `@`, tab,
 * carriage return) is written to every CSV after a `'`, so a spreadsheet shows it as text; numbers keep
 * their digits and sign, in a small table and in a report of many chunks (the built CLI).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { writeReportTables } from '../../src/reports/writers/report-writer.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';

const NOW = { PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' };
const FORMULA_NOTE = '=HYPERLINK("http://evil.example/x","Xem chi tiết")';
/** Each value that starts a formula, and how the CSV must hold it. */
const FORMULA_TEXTS = [
  [FORMULA_NOTE, `'${FORMULA_NOTE}`],
  ['+84 912 345 678 gọi lại', "'+84 912 345 678 gọi lại"],
  ['-1+1 khách vắng nhà', "'-1+1 khách vắng nhà"],
  ['@SUM(A1:A9)', "'@SUM(A1:A9)"],
  ['\t=1+1', "'\t=1+1"],
  ['\r=1+1', "'\r=1+1"],
  ['Khách hẹn giao lại = sáng mai', 'Khách hẹn giao lại = sáng mai'],
] as const;

async function csvRows(path: string): Promise<string[][]> {
  return parse(await readFile(path), { bom: true }) as string[][];
}

describe('formula-safe CSV reports', () => {
  let dir: string;
  let dbPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-formula-csv-'));
    dbPath = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(dbPath, 9_000);
    const warehouse = await Warehouse.open(dbPath);
    try {
      await warehouse.run(`UPDATE delivery_failures SET delay_note = $1 WHERE right(order_code, 1) = '3'`, [
        FORMULA_NOTE,
      ]);
    } finally {
      await warehouse.close();
    }
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('writes text that starts a formula after a quote, numbers as they are (one chunk)', async () => {
    const warehouse = await Warehouse.open(join(dir, 'small.duckdb'));
    const values = FORMULA_TEXTS.map(
      ([text], i) =>
        `(${i}, '${text.replaceAll("'", "''")}', CAST(-12.5 AS DECIMAL(20,4)) * ${i}, -${i}, CAST(-0.25 AS DOUBLE))`,
    ).join(', ');
    try {
      await mkdir(join(dir, 'small'));
      await writeReportTables(
        warehouse.connection,
        [
          {
            name: 'notes',
            query: `SELECT note, amount, delta, ratio FROM (VALUES ${values}) AS t(i, note, amount, delta, ratio) ORDER BY i`,
          },
        ],
        { outDir: join(dir, 'small'), format: 'csv', range: { from: '2026-11-01', to: '2026-11-30' } },
      );
    } finally {
      await warehouse.close();
    }
    const [header, ...rows] = await csvRows(join(dir, 'small', 'notes_2026-11-01_2026-11-30.csv'));
    expect(header).toEqual(['note', 'amount', 'delta', 'ratio']);
    expect(rows).toEqual(
      FORMULA_TEXTS.map(([, written], i) => [
        written,
        i === 0 ? '0.0000' : `-${(12.5 * i).toFixed(4)}`,
        String(-i),
        '-0.25',
      ]),
    );
  });

  it('writes the carrier note of the failures report as text in every chunk (worker threads)', async () => {
    const out = join(dir, 'failures');
    const result = await cli(['report', 'failures', '--db', dbPath, '--format', 'csv', '--out', out, '--json'], NOW);
    expect(result.code, result.stderr).toBe(0);
    const files = Object.fromEntries(
      (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files.map((f) => [f.table, f.path]),
    );
    const [header, ...rows] = await csvRows(files.failures!);
    expect(rows.length).toBeGreaterThan(2048);
    const note = header!.indexOf('delay_note');
    const attempt = header!.indexOf('attempt_no');
    const code = header!.indexOf('order_code');
    const formulaRows = rows.filter((row) => row[code]!.endsWith('3'));
    expect(formulaRows.length).toBeGreaterThan(100);
    expect(rows.indexOf(formulaRows.at(-1)!)).toBeGreaterThan(2048);
    for (const row of formulaRows) expect(row[note]).toBe(`'${FORMULA_NOTE}`);
    expect(rows.every((row) => !/^[=+\-@\t\r]/.test(row[note]!))).toBe(true);
    expect(rows.every((row) => /^\d+$/.test(row[attempt]!))).toBe(true);
  });

  it('writes text cells of `sql --format csv` the same way, numbers as they are', async () => {
    const query = `SELECT delay_note, -2.5::DECIMAL(10, 2) AS amount, -3 AS n FROM delivery_failures WHERE delay_note = '${FORMULA_NOTE.replaceAll("'", "''")}' LIMIT 1`;
    const result = await cli(['sql', query, '--db', dbPath, '--format', 'csv'], NOW);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result.stdout)).toEqual([
      ['delay_note', 'amount', 'n'],
      [`'${FORMULA_NOTE}`, '-2.50', '-3'],
    ]);
  });
});
