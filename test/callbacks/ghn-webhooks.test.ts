/**
 * GHN's webhooks received by the built receiver on their own path: GHN's published sample is
 * journaled as GHN's and stored once with its status mapped to the neutral set and its whole body
 * (fees, COD) kept; a webhook without the address's token, or malformed, is refused with the reason;
 * no token reaches the journal, the warehouse or a log line. Without a token, GHN's path is not served.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpPost } from '../sandbox/sandbox-http.js';
import {
  filesUnder,
  queryWarehouse,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/callback-receiver-process.js';

const TOKEN = 'ghn-webhook-token-5f2c9a1e7b';
const EXPRESS_KEY = 'k3y-of-hanoi-shop-0123456789';
const SAMPLE_PATH = join(import.meta.dirname, '../carriers/ghn-samples/webhook-create.json');

describe("parcel-recon callbacks: GHN's webhooks", () => {
  let dir: string;
  let dbPath: string;
  let journalDir: string;
  let receiver: ReceiverProcess;
  let sample: Record<string, unknown>;
  let post: (body: unknown, token?: string) => ReturnType<typeof httpPost>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-ghn-webhooks-'));
    dbPath = join(dir, 'recon.duckdb');
    journalDir = join(dir, 'journal');
    sample = JSON.parse(await readFile(SAMPLE_PATH, 'utf8')) as Record<string, unknown>;
    receiver = await startReceiverProcess(
      ['--db', dbPath, '--journal-dir', journalDir, '--ingest-interval-ms', '200', '--log-level', 'debug'],
      { PARCEL_RECON_API_KEYS: `hanoi-shop=${EXPRESS_KEY}`, PARCEL_RECON_CALLBACK_TOKEN: TOKEN },
    );
    post = (body, token = TOKEN) =>
      httpPost(`${receiver.url}/ghn/webhook?token=${encodeURIComponent(token)}`, JSON.stringify(body));
  });

  afterAll(async () => {
    await receiver?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("accepts GHN's published sample, journals it as GHN's and stores it once, a resend de-duplicated", async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await post(sample);
      expect(answer.status, answer.text).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ code: 200, message: 'Success' });
    }
    // A 247Express callback of the same order code is another carrier's event.
    const express = await httpPost(
      `${receiver.url}/IntergrationAPI`,
      JSON.stringify({ Time: '2021-11-11T10:52:50+07:00', Status: '1', OrderCode: 'Z82BS', ApiKey: EXPRESS_KEY }),
    );
    expect(express.status, express.text).toBe(200);

    const journaled = (await filesUnder(journalDir))
      .filter((file) => file.endsWith('.ndjson'))
      .map((file) => readFile(file, 'utf8'));
    const records = (await Promise.all(journaled))
      .flatMap((text) => text.split('\n'))
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.filter((r) => r.carrier === 'ghn')).toHaveLength(2);
    expect(records.find((r) => r.carrier === 'ghn')).toMatchObject({
      eventId: 'Z82BS|create|2021-11-11T03:52:50.158000Z',
      orderCode: 'Z82BS',
      status: 'ready_to_pick',
      authMethod: 'token',
    });

    await expect
      .poll(async () => (await queryWarehouse(dbPath, 'SELECT count(*)::INT AS n FROM callback_events'))[0]?.n, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(2);
    const rows = await queryWarehouse<Record<string, string | null>>(
      dbPath,
      `SELECT c.carrier, c.order_code, c.status, s.neutral_status, c.description, c.external_code,
              strftime(c.event_time, '%Y-%m-%dT%H:%M:%S.%fZ') AS event_time, c.auth_method, c.body::VARCHAR AS body
       FROM callback_events AS c LEFT JOIN status_codes AS s ON s.carrier = c.carrier AND s.code = c.status
       ORDER BY c.carrier`,
    );
    expect(rows.map((r) => [r.carrier, r.order_code])).toEqual([
      ['247express', 'Z82BS'],
      ['ghn', 'Z82BS'],
    ]);
    const ghn = rows[1]!;
    expect(ghn).toMatchObject({
      status: 'ready_to_pick',
      neutral_status: 'pending',
      description: 'Tạo đơn hàng',
      external_code: null,
      event_time: '2021-11-11T03:52:50.158000Z',
      auth_method: 'token',
    });
    // The whole body is kept: fees and COD as GHN sent them.
    expect(JSON.parse(ghn.body!)).toEqual(sample);
  });

  it('keeps a fee update without Status, its status empty and its fees in the body', async () => {
    const update = { ...sample, OrderCode: 'Z82FEE', Type: 'update_fee', Status: undefined, TotalFee: 80_400 };
    const answer = await post(update);
    expect(answer.status, answer.text).toBe(200);
    await expect
      .poll(
        async () =>
          await queryWarehouse<Record<string, string>>(
            dbPath,
            "SELECT status, event_id, body->>'TotalFee' AS total FROM callback_events WHERE order_code = 'Z82FEE'",
          ),
        { timeout: 20_000, interval: 200 },
      )
      .toEqual([{ status: '', event_id: 'Z82FEE|update_fee|2021-11-11T03:52:50.158000Z', total: '80400' }]);
  });

  it.each([
    ['no token', () => sample, '', 401, 'token'],
    ['a wrong token', () => sample, 'not-the-token-at-all', 401, 'token'],
    [
      'no OrderCode',
      () => ({ ...sample, OrderCode: undefined, Time: '2021-11-11T04:00:00Z' }),
      TOKEN,
      400,
      'OrderCode',
    ],
    ['a Time that is no date', () => ({ ...sample, OrderCode: 'BAD01', Time: '11/11/2021' }), TOKEN, 400, 'Time'],
    ['no Type', () => ({ ...sample, OrderCode: 'BAD02', Type: undefined }), TOKEN, 400, 'Type'],
  ] as const)(
    'answers %s with the status and the reason, and stores nothing',
    async (_, body, token, status, named) => {
      const answer = await post(body(), token);
      expect(answer.status).toBe(status);
      const parsed = JSON.parse(answer.text) as { code: number; message: string };
      expect(parsed.code).toBe(status);
      expect(parsed.message).toContain(named);
    },
  );

  it('stores nothing refused, and no token in the journal, the warehouse or the logs', async () => {
    const codes = await queryWarehouse(
      dbPath,
      'SELECT carrier, order_code FROM callback_events ORDER BY carrier, order_code',
    );
    expect(codes.map((r) => `${r.carrier}:${r.order_code}`)).toEqual(['247express:Z82BS', 'ghn:Z82BS', 'ghn:Z82FEE']);
    const texts = [receiver.logLines.join('\n')];
    for (const file of await filesUnder(dir)) texts.push((await readFile(file)).toString('latin1'));
    for (const text of texts) for (const secret of [TOKEN, EXPRESS_KEY]) expect(text.includes(secret)).toBe(false);
    expect(receiver.logLines.some((line) => line.includes('"path":"/ghn/webhook"'))).toBe(true);
  });
});

describe('parcel-recon callbacks without a token', () => {
  it("does not receive GHN's webhooks, and says so when it starts", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-ghn-no-token-'));
    const receiver = await startReceiverProcess(['--db', join(dir, 'recon.duckdb')], {
      PARCEL_RECON_API_KEYS: `hanoi-shop=${EXPRESS_KEY}`,
    });
    try {
      const answer = await httpPost(`${receiver.url}/ghn/webhook`, '{}');
      expect(answer.status).toBe(404);
      expect(receiver.logLines.join('\n')).toContain('PARCEL_RECON_CALLBACK_TOKEN');
    } finally {
      await receiver.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
