/**
 * GHN's webhooks end to end: the sandbox's GHN orders send their webhooks (and its 247Express orders
 * their callbacks) to the built `parcel-recon callbacks`, which is down at first: each is sent again
 * and received once it is up. The warehouse then holds GHN's webhooks beside 247Express's callbacks,
 * keyed by carrier, resends stored once, GHN's statuses mapped to the neutral set, its failed
 * deliveries with GHN's reasons; no GHN token reaches the warehouse file or the logs.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallbackRecord } from '../../src/sandbox/callback-sender.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { getJson, HOUR_MS, postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import {
  filesUnder,
  queryWarehouse,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/callback-receiver-process.js';

const WEBHOOK_TOKEN = 'shop-webhook-token-9c41d2e07f5a';

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("GHN's webhooks from the sandbox into the warehouse", () => {
  let sandbox: RunningSandbox;
  let receiver: ReceiverProcess | undefined;
  let dir: string;
  let db: string;
  let secrets: string[];
  let receiverLog: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-ghn-webhooks-e2e-'));
    db = join(dir, 'recon.duckdb');
    const port = await freePort();
    const receiverUrl = `http://127.0.0.1:${port}`;
    sandbox = await startTestSandbox({
      seed: 35,
      accounts: 2,
      ordersPerAccount: 15,
      futureDays: 2,
      lifecycle: { failedAttemptRate: 0.6 },
      callbacks: { url: receiverUrl, retryBaseMs: 1_000, maxAttempts: 6 },
      ghn: {
        ordersPerAccount: 25,
        webhooks: {
          url: `${receiverUrl}/ghn/webhook?token=${WEBHOOK_TOKEN}`,
          retryBaseMs: 1_000,
          duplicateRate: 0.3,
        },
      },
    });
    const expressKeys = sandbox.state.world.accounts.map((a) => `${a.alias}=${a.apiKey}`);
    const ghnTokens = sandbox.state.ghnWorld.accounts.map((a) => a.apiKey);
    secrets = [WEBHOOK_TOKEN, ...ghnTokens];

    // Two days of status changes, the first sent while the receiver is down.
    await postControl(sandbox, '/_sandbox/clock', { advanceMs: 48 * HOUR_MS });
    await vi.waitFor(
      async () => {
        const truth = await getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/ghn/webhooks`);
        if (!truth.some((record) => record.attempts >= 1)) throw new Error('none sent yet');
      },
      { timeout: 10_000, interval: 100 },
    );
    receiver = await startReceiverProcess(['--port', String(port), '--db', db, '--ingest-interval-ms', '200'], {
      // GHN's tokens are keys of the receiver too: cleared from whatever it keeps.
      PARCEL_RECON_API_KEYS: [
        ...expressKeys,
        ...sandbox.state.ghnWorld.accounts.map((a) => `ghn-${a.alias}=${a.apiKey}`),
      ].join(','),
      PARCEL_RECON_CALLBACK_TOKEN: WEBHOOK_TOKEN,
    });
    receiverLog = receiver.logLines;
    await postControl(sandbox, '/_sandbox/ghn/webhooks/flush');
    await postControl(sandbox, '/_sandbox/callbacks/flush');
  }, 120_000);

  afterAll(async () => {
    await receiver?.kill().catch(() => undefined);
    await sandbox?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('holds every webhook once, sent again after the failed delivery, beside the 247Express callbacks', async () => {
    const ghnTruth = await getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/ghn/webhooks`);
    const expressTruth = await getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/callbacks`);
    expect(ghnTruth.length).toBeGreaterThan(20);
    expect(ghnTruth.every((record) => record.outcome === 'delivered')).toBe(true);
    expect(ghnTruth.some((record) => record.attempts >= 2)).toBe(true);
    expect(ghnTruth.some((record) => record.duplicated)).toBe(true);
    expect(expressTruth.length).toBeGreaterThan(0);
    expect(expressTruth.every((record) => record.outcome === 'delivered')).toBe(true);

    const counts = async () =>
      Object.fromEntries(
        (
          await queryWarehouse<{ carrier: string; n: number }>(
            db,
            'SELECT carrier, count(*)::INT AS n FROM callback_events GROUP BY carrier',
          )
        ).map((row) => [row.carrier, row.n]),
      );
    await expect
      .poll(counts, { timeout: 30_000, interval: 300 })
      .toEqual({ '247express': expressTruth.length, ghn: ghnTruth.length });
    expect(await receiver!.stop()).toBe(0);
    receiver = undefined;

    const stored = await queryWarehouse<{ event_id: string; order_code: string; type: string }>(
      db,
      "SELECT event_id, order_code, body->>'Type' AS type FROM callback_events WHERE carrier = 'ghn'",
    );
    expect(stored.map((row) => row.event_id).sort()).toEqual(ghnTruth.map((record) => record.transactionId).sort());
    const ghnCodes = new Set([...sandbox.state.ghnWorld.orders()].map((plan) => plan.code));
    expect(stored.every((row) => ghnCodes.has(row.order_code))).toBe(true);
    expect(new Set(stored.map((row) => row.type))).toEqual(new Set(['create', 'switch_status', 'update_fee']));
  });

  it("maps GHN's statuses to the neutral set and keeps its failed deliveries with GHN's reasons", async () => {
    const unmapped = await queryWarehouse(
      db,
      `SELECT c.status FROM callback_events AS c
       LEFT JOIN status_codes AS s ON s.carrier = c.carrier AND s.code = c.status
       WHERE c.carrier = 'ghn' AND s.neutral_status IS NULL`,
    );
    expect(unmapped).toEqual([]);
    const failures = await queryWarehouse<{ carrier: string; delay_code: string | null; meaning: string | null }>(
      db,
      `SELECT f.carrier, f.delay_code, r.meaning FROM delivery_failures AS f
       LEFT JOIN delay_reasons AS r ON r.carrier = f.carrier AND r.code = f.delay_code
       WHERE f.carrier = 'ghn'`,
    );
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((row) => row.meaning !== null)).toBe(true);
    const fee = await queryWarehouse<{ total: string }>(
      db,
      "SELECT body->>'TotalFee' AS total FROM callback_events WHERE carrier = 'ghn' AND (body->>'Type') = 'update_fee' LIMIT 1",
    );
    expect(Number(fee[0]!.total)).toBeGreaterThan(0);
  });

  it('keeps no GHN token in the warehouse, the journal or the logs', async () => {
    const files = await filesUnder(dir);
    expect(files).toContain(db);
    const texts = [receiverLog.join('\n')];
    for (const file of files) texts.push((await readFile(file)).toString('latin1'));
    expect(receiverLog.some((line) => line.includes('callbacks loaded into the warehouse'))).toBe(true);
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret)).toBe(false);
  });
});
