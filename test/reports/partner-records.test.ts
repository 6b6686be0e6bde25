import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadPartnerCsvWithDuckDb,
  loadPartnerRecords,
  PartnerRecordsError,
} from '../../src/reports/partner-records.js';
import { confineConnection } from '../../src/warehouse/duckdb-confinement.js';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'partner-records-'));
  file = join(dir, 'partner.duckdb');
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  await connection.run(
    `CREATE TABLE records AS SELECT 'EX' || lpad(n::VARCHAR, 9, '0') AS order_code FROM range(1, 4) t(n)`,
  );
  connection.closeSync();
  instance.closeSync();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('partner records from a DuckDB file', () => {
  it('reads the query over the file, and nothing but the file', async () => {
    const keys = join(dir, 'keys.json');
    await writeFile(keys, '{"shop-a":"secret-key-value"}');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      expect(
        await loadPartnerRecords(connection, { kind: 'duckdb', file, query: 'SELECT order_code FROM records' }),
      ).toBe(3);
      for (const query of [`SELECT content AS order_code FROM read_text('${keys}')`, 'INSTALL httpfs']) {
        const refused = await loadPartnerRecords(connection, { kind: 'duckdb', file, query }).catch((error) => error);
        expect(refused).toBeInstanceOf(PartnerRecordsError);
        expect(refused.message).toMatch(/^DuckDB query failed: /);
        expect(refused.message).not.toContain('secret-key-value');
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe('partner records from a CSV file on a confined connection', () => {
  it('are read by DuckDB from the file it may read, and nothing else beside it', async () => {
    const csv = join(dir, 'allowed.csv');
    await writeFile(csv, 'order_code,invoiced_amount\nEX000000001,12000\nEX000000002,13000\n');
    const keys = join(dir, 'keys-beside.json');
    await writeFile(keys, '{"shop-a":"secret-key-value"}');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await confineConnection(connection, [], [csv]);
      expect(await loadPartnerCsvWithDuckDb(connection, csv)).toBe(2);
      await expect(connection.run(`SELECT * FROM read_text('${keys}')`)).rejects.toThrow(/Permission Error/);
      await expect(connection.run('SET enable_external_access = true')).rejects.toThrow();
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe('partner records from a CSV file with mixed separators and blank lines', () => {
  /** The records loaded from a CSV file: each row's line number, origin (its line) and fields. */
  async function loaded(path: string): Promise<unknown[][]> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await loadPartnerRecords(connection, { kind: 'csv', file: path });
      const reader = await connection.runAndReadAll(
        `SELECT line_no, replace(origin, ${`'${dir}'`}, ''), order_code, expected_status, invoiced_amount, cod_amount FROM partner_records ORDER BY line_no`,
      );
      return reader.getRows();
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  }

  it('reads the same records, line numbers and values whether or not the file quotes a value', async () => {
    const lines = [
      '\uFEFF Extra ; OrderCode,Invoiced_Amount,expected_status',
      'a;EX000000001,  12000 ,30',
      '',
      'b,EX000000002;;',
      'c,EX000000003',
      ',,,,,,',
      'd;EX000000004,5000.5,Đã giao hàng,tail',
      ' ',
      '',
      'e,EX000000005,\t7 \u00A0,18',
    ];
    const plain = join(dir, 'plain.csv');
    await writeFile(plain, `${lines.join('\n')}\n`);
    // One quoted value makes the file one the CSV parser reads in full; the lines before it are the same.
    const quoted = join(dir, 'quoted.csv');
    await writeFile(quoted, `${[...lines, 'f,"EX000000006",1,30'].join('\n')}\n`);
    const fast = (await loaded(plain)).map(([n, origin, ...values]) => [
      n,
      String(origin).replace('plain', ''),
      ...values,
    ]);
    const full = (await loaded(quoted)).map(([n, origin, ...values]) => [
      n,
      String(origin).replace('quoted', ''),
      ...values,
    ]);
    expect(full).toHaveLength(fast.length + 1);
    expect(fast).toEqual(full.slice(0, -1));
    expect(fast[0]).toEqual([1n, '/.csv:2', 'EX000000001', '30', '12000', null]);
    expect(fast.at(-1)).toEqual([7n, '/.csv:10', 'EX000000005', '18', '7', null]);
  });
});
