/**
 * CSV files of many chunks: DuckDB works on rows 2,048 at a time, on every thread. The files must hold
 * every row once, in the query's order, each value
 * as DuckDB writes it as text: the same as the Parquet file of the same run read back as text. The
 * charges rows may come in any order, which lets DuckDB write them on every thread: the JSON file of
 * many chunks must still be one JSON array holding every order once.
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
import { csvTimeSeconds, parquetTimeSql } from './report-fixtures.js';

const NOW = { PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' };
const TIME_TYPE = 'TIMESTAMP WITH TIME ZONE';
/** A note that needs quoting: quotes, a comma, a line break, Vietnamese. */
const TRICKY_NOTE = 'Khách hẹn "giao lại",\nsáng mai Đống Đa';

describe('CSV reports of many chunks', () => {
  let dir: string;
  let dbPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-csv-batches-'));
    dbPath = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(dbPath, 20_000);
    const warehouse = await Warehouse.open(dbPath);
    try {
      await warehouse.run(`UPDATE delivery_failures SET delay_note = $1 WHERE right(order_code, 1) = '7'`, [
        TRICKY_NOTE,
      ]);
    } finally {
      await warehouse.close();
    }
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** The report's files in one format: table name to path. */
  async function report(name: string, format: string): Promise<Record<string, string>> {
    const result = await cli(
      ['report', name, '--db', dbPath, '--format', format, '--out', join(dir, name, format), '--json'],
      NOW,
    );
    expect(result.code, result.stderr).toBe(0);
    return Object.fromEntries(
      (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files.map((f) => [f.table, f.path]),
    );
  }

  /**
   * A Parquet file's rows, every value cast to text by DuckDB (null stays null), times as epoch
   * seconds, in file order; and its columns' types.
   */
  async function parquetAsText(
    path: string,
  ): Promise<{ columns: string[]; types: string[]; rows: (string | null)[][] }> {
    const warehouse = await Warehouse.open(join(dir, 'reader.duckdb'));
    try {
      const shape = await warehouse.readAll(`SELECT * FROM read_parquet('${path}') LIMIT 0`);
      const columns = shape.columnNames();
      const types = shape.columnTypes().map((t) => t.toString());
      const texts = columns.map((c, i) => (types[i] === TIME_TYPE ? parquetTimeSql(c) : `CAST("${c}" AS VARCHAR)`));
      const reader = await warehouse.readAll(`SELECT ${texts.join(', ')} FROM read_parquet('${path}')`);
      return { columns, types, rows: reader.getRows() as (string | null)[][] };
    } finally {
      await warehouse.close();
    }
  }

  /** A CSV file's rows, the times (in the display time zone) of the columns Parquet types as times as epoch seconds. */
  async function csvRows(path: string, types: readonly string[]): Promise<string[][]> {
    const bytes = await readFile(path);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...rows] = parse(bytes, { bom: true }) as string[][];
    return [header!, ...rows.map((row) => row.map((v, i) => (types[i] === TIME_TYPE ? csvTimeSeconds(v) : v)))];
  }

  it('writes the failed attempts in their order, each row once, quoting intact', async () => {
    const csv = await report('failures', 'csv');
    const parquet = await report('failures', 'parquet');
    const expected = await parquetAsText(parquet.failures!);
    expect(expected.rows.length).toBeGreaterThan(4 * 2048);
    const [header, ...rows] = await csvRows(csv.failures!, expected.types);
    expect(header).toEqual(expected.columns);
    expect(rows).toEqual(expected.rows.map((row) => row.map((value) => value ?? '')));
    expect(rows.filter((row) => row[header!.indexOf('delay_note')] === TRICKY_NOTE).length).toBeGreaterThan(100);
  });

  it('writes every order of the charges audit with the money digits DuckDB gives', async () => {
    const csv = await report('charges', 'csv');
    const parquet = await report('charges', 'parquet');
    const expected = await parquetAsText(parquet.charges!);
    expect(expected.rows.length).toBe(20_000);
    const [header, ...rows] = await csvRows(csv.charges!, expected.types);
    expect(header).toEqual(expected.columns);
    // Two runs store the orders' rows in an order of their own: compared by order_code.
    const byCode = (a: readonly (string | null)[], b: readonly (string | null)[]) =>
      String(a[0]).localeCompare(String(b[0]));
    expect(rows.sort(byCode)).toEqual(expected.rows.map((row) => row.map((value) => value ?? '')).sort(byCode));
    const price = header!.indexOf('fuel_expected');
    expect(rows.every((row) => /^\d+\.\d{4}$/.test(row[price]!))).toBe(true);
    // Whichever decimals the checks ran in, the Parquet file keeps money as the warehouse stores it.
    const money = ['price', 'fuel_expected', 'fuel_difference', 'amount_at_stake'];
    expect(money.map((c) => expected.types[expected.columns.indexOf(c)])).toEqual(money.map(() => 'DECIMAL(20,4)'));
  });

  it('writes the charges audit as one JSON array of every order once, the values of the Parquet file', async () => {
    const json = await report('charges', 'json');
    const parquet = await report('charges', 'parquet');
    const expected = await parquetAsText(parquet.charges!);
    const objects = JSON.parse(await readFile(json.charges!, 'utf8')) as Record<string, unknown>[];
    const code = expected.columns.indexOf('order_code');
    const total = expected.columns.indexOf('total_service_cost');
    const flags = expected.columns.indexOf('flags_failed');
    const fromParquet = new Map(expected.rows.map((row) => [row[code], [Number(row[total]), Number(row[flags])]]));
    expect(objects.length).toBe(20_000);
    expect(new Set(objects.map((o) => o.order_code)).size).toBe(20_000);
    expect(Object.keys(objects[0]!)).toEqual(expected.columns);
    for (const o of objects)
      expect([o.total_service_cost, o.flags_failed]).toEqual(fromParquet.get(o.order_code as string));
  });

  it('puts the connection back in order after a file written in any order', async () => {
    const warehouse = await Warehouse.open(dbPath, { readOnly: true, directories: [dir] });
    const setting = async () =>
      (await warehouse.readAll("SELECT current_setting('preserve_insertion_order') AS kept")).getRowObjectsJson()[0]!
        .kept;
    try {
      const table = { name: 'orders-any-order', query: 'SELECT order_code FROM orders', anyOrder: true };
      const range = { from: '2026-10-01', to: '2026-12-31' };
      await mkdir(join(dir, 'any-order'));
      await writeReportTables(warehouse.connection, [table], { outDir: join(dir, 'any-order'), format: 'json', range });
      expect(await setting()).toBe(true);
      await warehouse.run('SET preserve_insertion_order = false');
      await writeReportTables(warehouse.connection, [table], {
        outDir: join(dir, 'any-order'),
        format: 'parquet',
        range,
      });
      expect(await setting()).toBe(false);
    } finally {
      await warehouse.close();
    }
  });

  it('writes a large Parquet file in row groups small enough to stay within the memory limit', async () => {
    const warehouse = await Warehouse.open(dbPath, { readOnly: true, directories: [dir] });
    try {
      const table = { name: 'many-rows', query: 'SELECT range AS n FROM range(200000)' };
      await mkdir(join(dir, 'row-groups'), { recursive: true });
      const [file] = await writeReportTables(warehouse.connection, [table], {
        outDir: join(dir, 'row-groups'),
        format: 'parquet',
        range: { from: '2026-10-01', to: '2026-12-31' },
      });
      const [groups] = (
        await warehouse.readAll(
          `SELECT count(DISTINCT row_group_id) AS groups, max(row_group_num_rows) AS largest
           FROM parquet_metadata('${file!.path}')`,
        )
      ).getRowObjectsJson();
      expect(file!.rows).toBe(200_000);
      expect(Number(groups!.largest)).toBeLessThanOrEqual(65_536);
      expect(Number(groups!.groups)).toBeGreaterThanOrEqual(4);
    } finally {
      await warehouse.close();
    }
  });
});
