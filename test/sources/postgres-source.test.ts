import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceItem } from '../../src/sources/order-code-source.js';
import { postgresSource } from '../../src/sources/postgres-source.js';
import { type PostgresServer, startPostgres } from '../support/postgres-server.js';
import { readItems, sourceErrorOf } from '../support/source-reading.js';

const ROWS = 20_000;
let server: PostgresServer;
let admin: pg.Client;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  // Every 7th code null, every 11th blank; accounts on even rows, blank on odd multiples of 3.
  await admin.query(`
    CREATE TABLE orders AS
    SELECT n,
           CASE WHEN n % 7 = 0 THEN NULL WHEN n % 11 = 0 THEN '  ' ELSE ' EX' || lpad(n::text, 9, '0') || ' ' END AS code,
           CASE WHEN n % 2 = 0 THEN 'acc' || (n % 3) WHEN n % 3 = 0 THEN '' END AS account
    FROM generate_series(1, ${ROWS}) AS n`);
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

/** The URL with other credentials or another port, for the failures to connect. */
function urlWith(change: (url: URL) => void): string {
  const url = new URL(server.url);
  change(url);
  return url.toString();
}

/** Sessions of the server opened under `applicationName`, as another session sees them. */
async function sessionsOf(applicationName: string): Promise<number> {
  const { rows } = await admin.query<{ sessions: string }>(
    'SELECT count(*) AS sessions FROM pg_stat_activity WHERE application_name = $1',
    [applicationName],
  );
  return Number(rows[0]?.sessions);
}

/** Waits for the server to let a session go: a backend ends a moment after its client leaves. */
async function expectSessionsToEnd(applicationName: string): Promise<void> {
  for (let tries = 0; tries < 100 && (await sessionsOf(applicationName)) > 0; tries++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await sessionsOf(applicationName)).toBe(0);
}

describe('postgresSource', () => {
  it('reads 20,000 rows through the cursor in uneven batches, trimmed, rejecting null and blank codes by row', async () => {
    const items = await readItems(
      postgresSource(server.url, 'SELECT code AS order_code, account FROM orders ORDER BY n', { batchSize: 333 }),
    );
    expect(items).toHaveLength(ROWS);
    const rejectedRows = items.flatMap((item, index) => (item.kind === 'rejected' ? [index + 1] : []));
    expect(rejectedRows).toEqual(
      Array.from({ length: ROWS }, (_, i) => i + 1).filter((n) => n % 7 === 0 || n % 11 === 0),
    );
    expect(items[6]).toEqual({
      kind: 'rejected',
      rejection: { origin: 'postgres row 7', reason: 'order_code is null', text: null },
    });
    expect(items[10]).toEqual({
      kind: 'rejected',
      rejection: { origin: 'postgres row 11', reason: 'order_code is empty', text: null },
    });
    expect(items.slice(0, 3)).toEqual([
      { kind: 'code', code: { orderCode: 'EX000000001', account: null, origin: 'postgres row 1' } },
      { kind: 'code', code: { orderCode: 'EX000000002', account: 'acc2', origin: 'postgres row 2' } },
      { kind: 'code', code: { orderCode: 'EX000000003', account: null, origin: 'postgres row 3' } },
    ]);
    expect(items[ROWS - 1]).toEqual({
      kind: 'code',
      code: { orderCode: 'EX000020000', account: 'acc2', origin: `postgres row ${ROWS}` },
    });
  });

  it('reads a batch without fetching the whole result: the first of 100 million rows comes at once', async () => {
    const started = Date.now();
    const items = postgresSource(server.url, 'SELECT generate_series(1, 100000000) AS order_code')
      .items()
      [Symbol.asyncIterator]();
    expect(await items.next()).toEqual({
      done: false,
      value: { kind: 'code', code: { orderCode: '1', account: null, origin: 'postgres row 1' } },
    });
    await items.return?.();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('passes values that are not text on as PostgreSQL writes them, finding columns in any case', async () => {
    const items = await readItems(
      postgresSource(
        server.url,
        `SELECT DATE '2019-08-01' + n AS "ORDER_CODE", (n / 4.0)::numeric(10, 2) AS "Account" FROM orders WHERE n IN (2, 10) ORDER BY n`,
      ),
    );
    expect(items).toEqual([
      { kind: 'code', code: { orderCode: '2019-08-03', account: '0.50', origin: 'postgres row 1' } },
      { kind: 'code', code: { orderCode: '2019-08-11', account: '2.50', origin: 'postgres row 2' } },
    ]);
  });

  it('fails, naming the columns, when the result has no order_code column', async () => {
    const error = await sourceErrorOf(postgresSource(server.url, 'SELECT code, account FROM orders WHERE false'));
    expect(error.message).toBe('the PostgreSQL query has no order_code column; its columns are "code", "account"');
  });

  it('fails with one line from PostgreSQL when the query is wrong, or fails while its rows are read', async () => {
    expect((await sourceErrorOf(postgresSource(server.url, 'SELEC code AS order_code FROM orders'))).message).toBe(
      'PostgreSQL query failed: syntax error at or near "SELEC"',
    );
    const items: SourceItem[] = [];
    // No ORDER BY: rows are computed as they are fetched, so the rows of the batches before arrive first.
    const failing = postgresSource(
      server.url,
      'SELECT CASE WHEN n = 15000 THEN (1 / (n - n))::text ELSE code END AS order_code FROM orders',
      {
        batchSize: 1000,
      },
    );
    await expect(
      (async () => {
        for await (const item of failing.items()) items.push(item);
      })(),
    ).rejects.toThrow('PostgreSQL query failed: division by zero');
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThan(15000);
  });

  it('fails to connect with a wrong password, never showing a password', async () => {
    const wrongPassword = 'not-the-Secret-42';
    const source = postgresSource(
      urlWith((url) => {
        url.password = wrongPassword;
      }),
      'SELECT 1 AS order_code',
    );
    const error = await sourceErrorOf(source);
    expect(error.message).toBe(
      `cannot connect to PostgreSQL at recon@127.0.0.1:${server.port}/postgres: password authentication failed for user "recon"`,
    );
    for (const text of [error.message, source.description, postgresSource(server.url, 'SELECT 1').description]) {
      expect(text).not.toContain(wrongPassword);
      expect(text).not.toContain(server.password);
    }
    expect(postgresSource(server.url, 'SELECT code AS order_code\n  FROM orders').description).toBe(
      `postgres:recon@127.0.0.1:${server.port}/postgres: SELECT code AS order_code FROM orders`,
    );
  });

  it('fails to connect where no server listens, and refuses a URL that is not PostgreSQL', async () => {
    const closed = await sourceErrorOf(
      postgresSource(
        urlWith((url) => {
          url.port = '1';
        }),
        'SELECT 1 AS order_code',
      ),
    );
    expect(closed.message).toBe(
      `cannot connect to PostgreSQL at recon@127.0.0.1:1/postgres: connect ECONNREFUSED 127.0.0.1:1`,
    );
    const notAUrl = postgresSource(`mysql://recon:${server.password}@127.0.0.1/db`, 'SELECT 1');
    expect((await sourceErrorOf(notAUrl)).message).toBe(
      'not a PostgreSQL URL: expected postgres://user:password@host:port/database',
    );
    expect(notAUrl.description).not.toContain(server.password);
  });

  it('ends its session when the consumer stops early, and when the query fails', async () => {
    const applicationName = 'early-stop-probe';
    const url = `${server.url}?application_name=${applicationName}`;
    let read = 0;
    for await (const item of postgresSource(url, 'SELECT code AS order_code FROM orders', { batchSize: 100 }).items()) {
      expect(item.kind).toBeDefined();
      if (read === 0) expect(await sessionsOf(applicationName)).toBe(1);
      if (++read === 10) break;
    }
    expect(read).toBe(10);
    await expectSessionsToEnd(applicationName);

    await sourceErrorOf(postgresSource(url, 'SELECT code FROM orders'));
    await expectSessionsToEnd(applicationName);
  });
});
