import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlSource } from '../../src/sources/mysql-source.js';
import type { SourceItem } from '../../src/sources/order-code-source.js';
import { type MariadbServer, startMariadb } from '../support/mariadb-server.js';
import { readItems, sourceErrorOf } from '../support/source-reading.js';

const ROWS = 20_000;
const DIST = join(import.meta.dirname, '../../dist/src');
/** What starts `parcel-recon track`, with its start-time memory settings. */
const TRACK_LAUNCHER = join(import.meta.dirname, '../../bin/node-with-track-settings');
let server: MariadbServer;
let admin: mysql.Connection;

beforeAll(async () => {
  server = await startMariadb();
  admin = await server.connect();
  // Every 7th code null, every 11th blank; accounts on even rows, blank on odd multiples of 3.
  await admin.query(`
    CREATE TABLE orders AS
    SELECT seq AS n,
           CASE WHEN seq % 7 = 0 THEN NULL WHEN seq % 11 = 0 THEN '  ' ELSE CONCAT(' EX', LPAD(seq, 9, '0'), ' ') END AS code,
           CASE WHEN seq % 2 = 0 THEN CONCAT('acc', seq % 3) WHEN seq % 3 = 0 THEN '' END AS account
    FROM seq_1_to_${ROWS}`);
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

/** The source over the test server, USER's password given as the command line gives it. */
function source(query: string, options: { readAhead?: number } = {}) {
  return mysqlSource(server.url, query, { password: server.password, ...options });
}

/** The URL with another port, for the failures to connect. */
function urlWithPort(port: number): string {
  const url = new URL(server.url);
  url.port = String(port);
  return url.toString();
}

/** The server's connections as USER other than the tests' own. */
async function otherConnections(): Promise<number> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>(
    'SELECT count(*) AS connections FROM information_schema.PROCESSLIST WHERE USER = ? AND ID <> CONNECTION_ID()',
    [server.user],
  );
  return Number(rows[0]?.connections);
}

/** Waits for the server to let a connection go: its thread ends a moment after the client leaves. */
async function expectConnectionsToEnd(): Promise<void> {
  for (let tries = 0; tries < 100 && (await otherConnections()) > 0; tries++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await otherConnections()).toBe(0);
}

describe('mysqlSource', () => {
  it('reads 20,000 rows as a stream, trimmed, rejecting null and blank codes by row', async () => {
    const items = await readItems(
      source('SELECT code AS order_code, account FROM orders ORDER BY n', { readAhead: 333 }),
    );
    expect(items).toHaveLength(ROWS);
    const rejectedRows = items.flatMap((item, index) => (item.kind === 'rejected' ? [index + 1] : []));
    expect(rejectedRows).toEqual(
      Array.from({ length: ROWS }, (_, i) => i + 1).filter((n) => n % 7 === 0 || n % 11 === 0),
    );
    expect(items[6]).toEqual({
      kind: 'rejected',
      rejection: { origin: 'mysql row 7', reason: 'order_code is null', text: null },
    });
    expect(items[10]).toEqual({
      kind: 'rejected',
      rejection: { origin: 'mysql row 11', reason: 'order_code is empty', text: null },
    });
    expect(items.slice(0, 3)).toEqual([
      { kind: 'code', code: { orderCode: 'EX000000001', account: null, origin: 'mysql row 1' } },
      { kind: 'code', code: { orderCode: 'EX000000002', account: 'acc2', origin: 'mysql row 2' } },
      { kind: 'code', code: { orderCode: 'EX000000003', account: null, origin: 'mysql row 3' } },
    ]);
    expect(items[ROWS - 1]).toEqual({
      kind: 'code',
      code: { orderCode: 'EX000020000', account: 'acc2', origin: `mysql row ${ROWS}` },
    });
  });

  it('hands the first of 100 million rows over at once, and ends its connection when the consumer stops', async () => {
    const started = Date.now();
    const items = source('SELECT seq AS order_code FROM seq_1_to_100000000').items()[Symbol.asyncIterator]();
    expect(await items.next()).toEqual({
      done: false,
      value: { kind: 'code', code: { orderCode: '1', account: null, origin: 'mysql row 1' } },
    });
    expect(await otherConnections()).toBe(1);
    await items.return?.();
    expect(Date.now() - started).toBeLessThan(5000);
    await expectConnectionsToEnd();
  });

  it('passes BIGINT, DECIMAL, dates and text on as MySQL writes them, finding columns in any case', async () => {
    const items = await readItems(
      source(
        `SELECT CAST(9007199254740993 + n AS UNSIGNED) AS \`ORDER_CODE\`, CAST(n / 4 AS DECIMAL(10, 2)) AS \`Account\` FROM orders WHERE n IN (2, 10)
         UNION ALL SELECT DATE '2019-08-01', 'Cửa hàng Hà Nội'
         UNION ALL SELECT 18446744073709551615, NULL`,
      ),
    );
    expect(items).toEqual([
      { kind: 'code', code: { orderCode: '9007199254740995', account: '0.50', origin: 'mysql row 1' } },
      { kind: 'code', code: { orderCode: '9007199254741003', account: '2.50', origin: 'mysql row 2' } },
      { kind: 'code', code: { orderCode: '2019-08-01', account: 'Cửa hàng Hà Nội', origin: 'mysql row 3' } },
      { kind: 'code', code: { orderCode: '18446744073709551615', account: null, origin: 'mysql row 4' } },
    ]);
  });

  it('fails, naming the columns, when the result has no order_code column, even with no rows', async () => {
    expect((await sourceErrorOf(source('SELECT code, account FROM orders WHERE false'))).message).toBe(
      'the MySQL query has no order_code column; its columns are "code", "account"',
    );
    expect((await sourceErrorOf(source('SELECT code FROM orders'))).message).toBe(
      'the MySQL query has no order_code column; its columns are "code"',
    );
    expect((await sourceErrorOf(source('DO 1'))).message).toBe(
      'the MySQL query has no order_code column; its columns are none',
    );
  });

  it('fails with one line from the server when the query is wrong, or fails while its rows are read', async () => {
    expect((await sourceErrorOf(source('SELEC code AS order_code FROM orders'))).message).toBe(
      "MySQL query failed: You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near 'SELEC code AS order_code FROM orders' at line 1",
    );
    expect((await sourceErrorOf(source('SELECT code AS order_code FROM missing_table'))).message).toBe(
      "MySQL query failed: Table 'shop.missing_table' doesn't exist",
    );
    const items: SourceItem[] = [];
    // The server sends the rows before the failing one as it computes them.
    const failing = source(
      'SELECT IF(n = 15000, (SELECT seq FROM seq_1_to_2), code) AS order_code FROM orders ORDER BY n',
    );
    await expect(
      (async () => {
        for await (const item of failing.items()) items.push(item);
      })(),
    ).rejects.toThrow('MySQL query failed: Subquery returns more than 1 row');
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThan(15000);
    await expectConnectionsToEnd();
  });

  it('fails to connect with a wrong password, never showing a password', async () => {
    const wrongPassword = 'not-the-Secret-42';
    const wrong = mysqlSource(server.url, 'SELECT 1 AS order_code', { password: wrongPassword });
    const error = await sourceErrorOf(wrong);
    expect(error.message).toBe(
      `cannot connect to MySQL at recon@127.0.0.1:${server.port}/shop: Access denied for user 'recon'@'127.0.0.1' (using password: YES)`,
    );
    const inUrl = new URL(server.url);
    inUrl.password = wrongPassword;
    const wrongInUrl = mysqlSource(inUrl.toString(), 'SELECT 1 AS order_code', { password: server.password });
    expect((await sourceErrorOf(wrongInUrl)).message).toBe(error.message);
    for (const text of [error.message, wrong.description, wrongInUrl.description, source('SELECT 1').description]) {
      expect(text).not.toContain(wrongPassword);
      expect(text).not.toContain(server.password);
    }
    expect(source('SELECT code AS order_code\n  FROM orders').description).toBe(
      `mysql:recon@127.0.0.1:${server.port}/shop: SELECT code AS order_code FROM orders`,
    );
  });

  it('connects with the password in the URL, given the whole URL', async () => {
    const url = new URL(server.url);
    url.password = server.password;
    expect(await readItems(mysqlSource(url.toString(), 'SELECT code AS order_code FROM orders WHERE n = 1'))).toEqual([
      { kind: 'code', code: { orderCode: 'EX000000001', account: null, origin: 'mysql row 1' } },
    ]);
  });

  it('fails to connect where no server listens, and refuses a URL that is not MySQL', async () => {
    const closed = await sourceErrorOf(mysqlSource(urlWithPort(1), 'SELECT 1 AS order_code'));
    expect(closed.message).toBe('cannot connect to MySQL at recon@127.0.0.1:1/shop: connect ECONNREFUSED 127.0.0.1:1');
    const notAUrl = mysqlSource(`postgres://recon:${server.password}@127.0.0.1/db`, 'SELECT 1');
    expect((await sourceErrorOf(notAUrl)).message).toBe('not a MySQL URL: expected mysql://user@host:port/database');
    expect(notAUrl.description).not.toContain(server.password);
  });
});

describe('the MySQL source memory', () => {
  /**
   * Peak memory of a process that reads ROWS codes from the source with the memory settings of
   * `parcel-recon track`, a consumer slower than the server.
   */
  async function peakMemoryReading(rows: number): Promise<{ items: number; peakMb: number }> {
    const script = `
      const { keepHeapSmall } = await import(${JSON.stringify(pathToFileURL(join(DIST, 'cli/tracking-memory.js')).href)});
      const { mysqlSource } = await import(${JSON.stringify(pathToFileURL(join(DIST, 'sources/mysql-source.js')).href)});
      keepHeapSmall();
      const source = mysqlSource(process.env.SOURCE_URL, process.env.SOURCE_QUERY, { password: process.env.SOURCE_PASSWORD });
      let items = 0;
      for await (const item of source.items()) {
        if (item.kind === 'code') items++;
        // A pause every 100 rows: the server sends faster than this reads, as when a run stages its rows.
        if (items % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      process.stdout.write(JSON.stringify({ items, peakMb: process.resourceUsage().maxRSS / 1024 }));`;
    const { stdout } = await promisify(execFile)(TRACK_LAUNCHER, ['--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH ?? '',
        SOURCE_URL: server.url,
        SOURCE_PASSWORD: server.password,
        SOURCE_QUERY: `SELECT CONCAT('EX', LPAD(seq, 9, '0')) AS order_code, 'Cửa hàng Hà Nội' AS account FROM seq_1_to_${rows}`,
      },
    });
    return JSON.parse(stdout) as { items: number; peakMb: number };
  }

  it('stays within 50 MB over 1,000,000 rows of what 1,000 rows take', async () => {
    const small = await peakMemoryReading(1_000);
    const large = await peakMemoryReading(1_000_000);
    expect(small.items).toBe(1_000);
    expect(large.items).toBe(1_000_000);
    expect(large.peakMb - small.peakMb).toBeLessThan(50);
  }, 300_000);
});
