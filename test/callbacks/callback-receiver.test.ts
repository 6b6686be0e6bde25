/**
 * The callback receiver as a real process on loopback: the carrier's published example is stored with
 * the right instants; credentials, bodies and sizes are checked; nothing rejected is stored; the key
 * never reaches the journal, the warehouse or a log line.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet, httpPost } from '../sandbox/sandbox-http.js';
import {
  filesUnder,
  queryWarehouse,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/callback-receiver-process.js';

const KEY = 'k3y-of-hanoi-shop-0123456789';
const OTHER_KEY = 'k3y-of-saigon-shop-9876543210';
const ACCEPTED = { IsError: false, ErrorMessage: '' };

/** The carrier's published example (docs/carriers/247express.md): seven fraction digits, DeliveryDate without offset. */
const PUBLISHED_EXAMPLE = {
  Time: '2019-08-07T11:24:12.4946223+07:00',
  TransactionId: null,
  DeliveryDate: '2019-08-07 11:24:12',
  ReceiverName: 'Nguyễn Văn A',
  Mailman: 'Trần Văn B',
  DeliveryNotes: 'Đã giao hàng thành công',
  DelayNotes: null,
  RequestFeedbackCount: 0,
  Description: 'Phát thành công',
  Status: '30',
  StatusName: 'PHATTHANHCONG',
  OrderCode: 'EX900000001',
  ApiKey: KEY,
  DelayCode: null,
  ExternalCode: 'SHOP-0001',
  ReferenceCode: null,
  SomethingNew: { kept: true },
};

describe('parcel-recon callbacks (ApiKey)', () => {
  let dir: string;
  let dbPath: string;
  let receiver: ReceiverProcess;
  let post: (body: string, headers?: Record<string, string>) => ReturnType<typeof httpPost>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-callbacks-'));
    dbPath = join(dir, 'recon.duckdb');
    receiver = await startReceiverProcess(
      ['--db', dbPath, '--ingest-interval-ms', '200', '--max-body-bytes', '4096', '--log-level', 'debug'],
      {
        PARCEL_RECON_API_KEYS: `hanoi-shop=${KEY},saigon-shop=${OTHER_KEY}`,
      },
    );
    post = (body, headers) => httpPost(`${receiver.url}/IntergrationAPI`, body, headers);
  });

  afterAll(async () => {
    await receiver.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts the published example with its key and stores it with the right instants, once', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await post(JSON.stringify(PUBLISHED_EXAMPLE));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual(ACCEPTED);
    }
    const other = await post(
      JSON.stringify({
        ...PUBLISHED_EXAMPLE,
        OrderCode: 'EX900000002',
        TransactionId: 'T-2',
        ApiKey: OTHER_KEY,
        Status: '16',
        StatusName: 'CHOXULY',
        DelayCode: '13',
        // A carrier that echoes the key in a text field: it is cleared before anything keeps it.
        DelayNotes: `Người nhận vắng nhà (${OTHER_KEY})`,
      }),
    );
    expect(other.status).toBe(200);

    await expect
      .poll(async () => (await queryWarehouse(dbPath, 'SELECT count(*)::INT AS n FROM callback_events'))[0]?.n, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(2);
    const [example] = await queryWarehouse<Record<string, string>>(
      dbPath,
      `SELECT event_id, strftime(event_time, '%Y-%m-%dT%H:%M:%S.%fZ') AS event_time, strftime(delivery_date, '%Y-%m-%dT%H:%M:%S.%fZ') AS delivery_date,
              account_alias, auth_method, transaction_id, receiver_name, body::VARCHAR AS body
       FROM callback_events WHERE order_code = 'EX900000001'`,
    );
    expect(example).toMatchObject({
      event_time: '2019-08-07T04:24:12.494622Z',
      delivery_date: '2019-08-07T04:24:12.000000Z',
      account_alias: 'hanoi-shop',
      auth_method: 'apikey',
      transaction_id: null,
      receiver_name: 'Nguyễn Văn A',
    });
    expect(example!.event_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const body = JSON.parse(example!.body!) as Record<string, unknown>;
    expect(body.ApiKey).toBeUndefined();
    expect(body.SomethingNew).toEqual({ kept: true });
    expect(body.Time).toBe(PUBLISHED_EXAMPLE.Time);

    const failures = await queryWarehouse(
      dbPath,
      `SELECT order_code, strftime(attempted_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS attempted_at, delay_code, source, callback_event_id FROM delivery_failures`,
    );
    expect(failures).toEqual([
      {
        order_code: 'EX900000002',
        attempted_at: '2019-08-07T04:24:12.000000Z',
        delay_code: '13',
        source: 'callback',
        callback_event_id: 'T-2',
      },
    ]);
    const [echoed] = await queryWarehouse(
      dbPath,
      "SELECT delay_notes FROM callback_events WHERE order_code = 'EX900000002'",
    );
    expect(echoed!.delay_notes).toBe('Người nhận vắng nhà ([redacted])');
    const untracked = await queryWarehouse(dbPath, 'SELECT order_code FROM untracked_callbacks ORDER BY order_code');
    expect(untracked.map((r) => r.order_code)).toEqual(['EX900000001', 'EX900000002']);
  });

  it.each([
    ['a wrong ApiKey', { ...PUBLISHED_EXAMPLE, OrderCode: 'EXBAD00001', ApiKey: 'not-a-key' }, 401, 'ApiKey'],
    ['no ApiKey', { ...PUBLISHED_EXAMPLE, OrderCode: 'EXBAD00002', ApiKey: undefined }, 401, 'ApiKey'],
    ['a Time that is no date', { ...PUBLISHED_EXAMPLE, OrderCode: 'EXBAD00003', Time: '07/08/2019' }, 400, 'Time'],
    ['no OrderCode', { ...PUBLISHED_EXAMPLE, OrderCode: undefined }, 400, 'OrderCode'],
  ])('answers %s with %i naming the problem, and stores nothing', async (_, body, status, named) => {
    const answer = await post(JSON.stringify(body));
    expect(answer.status).toBe(status);
    const parsed = JSON.parse(answer.text) as { IsError: boolean; ErrorMessage: string };
    expect(parsed.IsError).toBe(true);
    expect(parsed.ErrorMessage).toContain(named);
  });

  it('answers 400 to a body that is not JSON, 413 past the size cap, 415 to another content type, 404 elsewhere', async () => {
    expect((await post('{"Time": ')).status).toBe(400);
    expect(JSON.parse((await post('[1]')).text).ErrorMessage).toContain('not a JSON object');
    const big = await post(JSON.stringify({ ...PUBLISHED_EXAMPLE, Description: 'x'.repeat(5000) }));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text)).toMatchObject({ IsError: true });
    const form = await httpPost(`${receiver.url}/IntergrationAPI`, 'a=b', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    expect((await httpPost(`${receiver.url}/IntegrationAPI`, JSON.stringify(PUBLISHED_EXAMPLE))).status).toBe(404);
  });

  it('answers 413 to a chunked body (no Content-Length) once it passes the cap', async () => {
    const chunk = Buffer.alloc(1024, 'a');
    const answer = await request(`${receiver.url}/IntergrationAPI`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Far more than the cap of 4 KiB, as a stream: no Content-Length.
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 64; i++) yield chunk;
        })(),
      ),
    }).catch((error: unknown) => error as Error);
    if (answer instanceof Error) throw answer;
    expect(answer.statusCode).toBe(413);
    expect(JSON.parse(await answer.body.text())).toMatchObject({
      IsError: true,
      ErrorMessage: expect.stringContaining('over the limit'),
    });
  });

  it('reports acknowledged and rejected callbacks, the backlog and the last load on GET /health', async () => {
    const health = JSON.parse((await httpGet(`${receiver.url}/health`)).text) as Record<string, any>;
    expect(health.status).toBe('ok');
    expect(health.acknowledged).toBe(3);
    expect(health.rejected['401']).toBe(2);
    expect(health.rejected['413']).toBe(2);
    expect(health.journal.backlogBytes).toBe(0);
    expect(health.warehouse.lastIngest.at).toBeTruthy();
  });

  it('stores nothing rejected, and no key in the journal, the warehouse or the logs', async () => {
    const codes = await queryWarehouse(dbPath, 'SELECT order_code FROM callback_events ORDER BY order_code');
    expect(codes.map((r) => r.order_code)).toEqual(['EX900000001', 'EX900000002']);
    const texts = [receiver.logLines.join('\n')];
    for (const file of await filesUnder(dir)) texts.push((await readFile(file)).toString('latin1'));
    expect(texts.length).toBeGreaterThan(1);
    for (const text of texts) for (const key of [KEY, OTHER_KEY]) expect(text.includes(key)).toBe(false);
    expect(receiver.logLines.some((line) => line.includes('hanoi-shop'))).toBe(true);
  });
});

describe('parcel-recon callbacks --auth basic', () => {
  it('accepts the right user and password (from a 0600 file) only, and ignores a body ApiKey', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-callbacks-basic-'));
    const passwordFile = join(dir, 'password');
    await writeFile(passwordFile, 'pa:ss wörd\n');
    await chmod(passwordFile, 0o600);
    const dbPath = join(dir, 'recon.duckdb');
    const receiver = await startReceiverProcess(
      ['--auth', 'basic', '--basic-user', 'carrier', '--password-file', passwordFile, '--db', dbPath],
      {},
    );
    try {
      const basic = (user: string, password: string) => ({
        authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
      });
      const { ApiKey: _, ...body } = PUBLISHED_EXAMPLE;
      const url = `${receiver.url}/IntergrationAPI`;
      expect((await httpPost(url, JSON.stringify(body), basic('carrier', 'pa:ss wörd'))).status).toBe(200);
      const wrong = await httpPost(
        url,
        JSON.stringify({ ...body, OrderCode: 'EXBAD00009' }),
        basic('carrier', 'pa:ss word'),
      );
      expect(wrong.status).toBe(401);
      expect(wrong.headers['www-authenticate']).toMatch(/^Basic/);
      expect((await httpPost(url, JSON.stringify({ ...body, OrderCode: 'EXBAD00010', ApiKey: KEY }))).status).toBe(401);
      expect(
        (await httpPost(url, JSON.stringify({ ...body, OrderCode: 'EXBAD00011' }), basic('intruder', 'pa:ss wörd')))
          .status,
      ).toBe(401);
      expect(await receiver.stop()).toBe(0);
      const rows = await queryWarehouse(dbPath, 'SELECT order_code, auth_method, account_alias FROM callback_events');
      expect(rows).toEqual([{ order_code: 'EX900000001', auth_method: 'basic', account_alias: null }]);
    } finally {
      await receiver.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a password file other users can read, with one line and exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-callbacks-basic-'));
    const passwordFile = join(dir, 'password');
    await writeFile(passwordFile, 'secret');
    await chmod(passwordFile, 0o644);
    try {
      await expect(
        startReceiverProcess(
          [
            '--auth',
            'basic',
            '--basic-user',
            'carrier',
            '--password-file',
            passwordFile,
            '--db',
            join(dir, 'r.duckdb'),
          ],
          {},
        ),
      ).rejects.toThrow(/exited with code 2[\s\S]*can be read by other users/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
