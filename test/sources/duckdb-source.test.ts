import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdbSource } from '../../src/sources/duckdb-source.js';
import type { SourceError } from '../../src/sources/order-code-source.js';
import { readItems, sourceErrorOf } from '../support/source-reading.js';

let dir: string;
let file: string;
const ROWS = 5000;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'duckdb-source-'));
  file = join(dir, 'orders.duckdb');
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  // Rows 1..5000, more than two of DuckDB's 2048-row chunks: every 7th code null, every 11th blank.
  await connection.run(`
    CREATE TABLE orders AS
    SELECT n,
           CASE WHEN n % 7 = 0 THEN NULL WHEN n % 11 = 0 THEN '   ' ELSE ' EX' || lpad(n::VARCHAR, 9, '0') || ' ' END AS code,
           CASE WHEN n % 2 = 0 THEN 'acc' || (n % 3) WHEN n % 3 = 0 THEN '' ELSE NULL END AS account,
           (n / 4)::DECIMAL(10, 2) AS amount
    FROM range(1, ${ROWS + 1}) t(n)`);
  connection.closeSync();
  instance.closeSync();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function queryError(query: string, at = file): Promise<SourceError> {
  return sourceErrorOf(duckdbSource(at, query));
}

/** Whether another process can open the file for writing, which DuckDB refuses while anyone holds it. */
async function writableByAnotherProcess(path: string): Promise<boolean> {
  const probe = `import { DuckDBInstance } from '@duckdb/node-api';
    try { (await DuckDBInstance.create(process.argv[1])).closeSync(); console.log('open'); } catch { console.log('locked'); }`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe, path], {
    cwd: process.cwd(),
  });
  return stdout.trim() === 'open';
}

describe('duckdbSource', () => {
  it('reads nothing but its own file: a query reading another file or installing an extension is refused', async () => {
    const keys = join(dir, 'keys.json');
    await writeFile(keys, '{"shop-a":"secret-key-value"}');
    for (const query of [
      `SELECT content AS order_code FROM read_text('${keys}')`,
      `SELECT * FROM read_csv('${keys}')`,
      'INSTALL httpfs',
    ]) {
      const error = await queryError(query);
      expect(error.message).toMatch(/^DuckDB query failed: /);
      expect(error.message).not.toContain('secret-key-value');
    }
  });

  it('reads every row chunk by chunk, trimmed, rejecting null and blank codes by row number', async () => {
    const items = await readItems(duckdbSource(file, 'SELECT code AS order_code, account FROM orders ORDER BY n'));
    expect(items).toHaveLength(ROWS);
    const rejected = items.flatMap((item, index) =>
      item.kind === 'rejected' ? [[index + 1, item.rejection] as const] : [],
    );
    const expectedRejected = Array.from({ length: ROWS }, (_, i) => i + 1).filter((n) => n % 7 === 0 || n % 11 === 0);
    expect(rejected.map(([row]) => row)).toEqual(expectedRejected);
    expect(rejected[0]?.[1]).toEqual({ origin: 'duckdb row 7', reason: 'order_code is null', text: null });
    expect(rejected[1]?.[1]).toEqual({ origin: 'duckdb row 11', reason: 'order_code is empty', text: null });
    expect(items[0]).toEqual({
      kind: 'code',
      code: { orderCode: 'EX000000001', account: null, origin: 'duckdb row 1' },
    });
    expect(items[1]).toEqual({
      kind: 'code',
      code: { orderCode: 'EX000000002', account: 'acc2', origin: 'duckdb row 2' },
    });
    expect(items[2]).toEqual({
      kind: 'code',
      code: { orderCode: 'EX000000003', account: null, origin: 'duckdb row 3' },
    });
    expect(items[4999]).toEqual({
      kind: 'code',
      code: { orderCode: 'EX000005000', account: 'acc2', origin: 'duckdb row 5000' },
    });
  });

  it('turns values that are not text into text, finding columns in any case', async () => {
    const items = await readItems(
      duckdbSource(file, 'SELECT n AS "ORDER_CODE", amount AS "Account" FROM orders WHERE n IN (2, 10) ORDER BY n'),
    );
    expect(items).toEqual([
      { kind: 'code', code: { orderCode: '2', account: '0.50', origin: 'duckdb row 1' } },
      { kind: 'code', code: { orderCode: '10', account: '2.50', origin: 'duckdb row 2' } },
    ]);
  });

  it('fails, naming the columns, when the result has no order_code column', async () => {
    const error = await queryError('SELECT code, account FROM orders');
    expect(error.message).toBe('the DuckDB query has no order_code column; its columns are "code", "account"');
  });

  it('fails with a one-line message from DuckDB when the query is wrong', async () => {
    const syntax = await queryError('SELEC code AS order_code FROM orders');
    expect(syntax.message).toMatch(/^DuckDB query failed: .*syntax error at or near "SELEC"$/);
    const missing = await queryError('SELECT code AS order_code FROM shipments');
    expect(missing.message).toMatch(/^DuckDB query failed: Catalog Error: Table with name shipments does not exist!/);
    expect(missing.message).not.toContain('\n');
  });

  it('fails when the query fails while its rows are read', async () => {
    const error = await queryError(
      `SELECT CASE WHEN n = 4000 THEN error('row 4000 is broken') ELSE code END AS order_code FROM orders`,
    );
    expect(error.message).toBe('DuckDB query failed: Invalid Input Error: row 4000 is broken');
  });

  it('fails on a missing file and does not create it', async () => {
    const missing = join(dir, 'missing.duckdb');
    const error = await queryError('SELECT 1 AS order_code', missing);
    expect(error.message).toMatch(/^cannot open DuckDB file .*missing\.duckdb: IO Error: .*database does not exist$/);
    expect(existsSync(missing)).toBe(false);
  });

  it('describes itself with the file and the query on one line', () => {
    expect(duckdbSource('data/in.duckdb', 'SELECT code AS order_code\n  FROM orders').description).toBe(
      'duckdb:data/in.duckdb: SELECT code AS order_code FROM orders',
    );
  });

  it('lets the file go when the consumer stops early', async () => {
    const items = duckdbSource(file, 'SELECT code AS order_code FROM orders').items()[Symbol.asyncIterator]();
    for (let read = 0; read < 10; read++) expect((await items.next()).done).toBe(false);
    expect(await writableByAnotherProcess(file)).toBe(false);
    // What `break` in a for-await loop does.
    await items.return?.();
    expect(await writableByAnotherProcess(file)).toBe(true);
  });
});
