import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPartnerRecords, PartnerRecordsError } from '../../src/reports/partner-records.js';

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
