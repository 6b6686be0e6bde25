/**
 * GHN's webhooks end to end: the sandbox's GHN orders send their webhooks (and its 247Express orders
 * their callbacks) to the built `parcel-recon callbacks`, which is down at first: each is sent again
 * and received once it is up. The warehouse then holds GHN's webhooks beside 247Express's callbacks,
 * keyed by carrier, resends stored once, GHN's statuses mapped to the neutral set, its failed
 * deliveries with GHN's reasons; no GHN token reaches the warehouse file or the logs. GHN's orders
 * are tracked before the webhooks come and again after: an order whose fees changed since its lookup
 * is looked up again though its status is terminal, and its stored fees are the webhook's.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallbackRecord } from '../../src/sandbox/callback-sender.js';
import { ghnShopId } from '../../src/sandbox/carriers/ghn/ghn-orders.js';
import { GHN_SANDBOX_BASE_PATH } from '../../src/sandbox/carriers/ghn/ghn-routes.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { getJson, HOUR_MS, postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import {
  filesUnder,
  queryWarehouse,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/callback-receiver-process.js';
import { cli, sandboxEnv } from '../support/cli-process.js';

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
      carriers: {
        ghn: {
          ordersPerAccount: 25,
          webhooks: {
            url: `${receiverUrl}/ghn/webhook?token=${WEBHOOK_TOKEN}`,
            retryBaseMs: 1_000,
            duplicateRate: 0.3,
          },
        },
      },
    });
    const expressKeys = sandbox.state.world.accounts.map((a) => `${a.alias}=${a.apiKey}`);
    await writeFile(
      ghnInput(),
      `order_code,account\n${[...sandbox.state.carrier('ghn').world.orders()].map((plan) => `${plan.code},${plan.account.alias}`).join('\n')}\n`,
    );
    const first = await trackGhn();
    expect(first.code, first.stderr).toBe(0);
    const ghnTokens = sandbox.state.carrier('ghn').world.accounts.map((a) => a.apiKey);
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
        ...sandbox.state.carrier('ghn').world.accounts.map((a) => `ghn-${a.alias}=${a.apiKey}`),
      ].join(','),
      PARCEL_RECON_CALLBACK_TOKEN: WEBHOOK_TOKEN,
    });
    receiverLog = receiver.logLines;
    await postControl(sandbox, '/_sandbox/ghn/webhooks/flush');
    await postControl(sandbox, '/_sandbox/callbacks/flush');
  }, 120_000);

  const ghnInput = () => join(dir, 'ghn-orders.csv');

  /** `track --carrier ghn` of every GHN order of the sandbox, at the sandbox's time. */
  function trackGhn() {
    return cli(
      ['track', '--carrier', 'ghn', '--input', ghnInput(), '--db', db, '--rate', '0', '--json', '--no-progress'],
      {
        ...sandboxEnv(sandbox),
        PARCEL_RECON_API_KEYS: sandbox.state
          .carrier('ghn')
          .world.accounts.map((a) => `${a.alias}:${ghnShopId(a)}=${a.apiKey}`)
          .join(','),
        PARCEL_RECON_TRACKING_URL: `${sandbox.url}${GHN_SANDBOX_BASE_PATH}`,
      },
    );
  }

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
    const ghnCodes = new Set([...sandbox.state.carrier('ghn').world.orders()].map((plan) => plan.code));
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
    // The webhooks' attempts: those before the first lookup are known from GHN's status log alone, which names no reason.
    const failures = await queryWarehouse<{ carrier: string; delay_code: string | null; meaning: string | null }>(
      db,
      `SELECT f.carrier, f.order_code, f.delay_code, r.meaning FROM delivery_failures AS f
       LEFT JOIN delay_reasons AS r ON r.carrier = f.carrier AND r.code = f.delay_code
       WHERE f.carrier = 'ghn' AND f.source = 'callback'`,
    );
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((row) => row.meaning !== null)).toBe(true);
    const fee = await queryWarehouse<{ total: string }>(
      db,
      "SELECT body->>'TotalFee' AS total FROM callback_events WHERE carrier = 'ghn' AND (body->>'Type') = 'update_fee' LIMIT 1",
    );
    expect(Number(fee[0]!.total)).toBeGreaterThan(0);
  });

  it('looks an order up again after a fee webhook, terminal or not, and stores the fees it tells of', async () => {
    // Each GHN order with a fee webhook later than its lookup: the webhook's fees, and the order as stored.
    const feeChanged = () =>
      queryWarehouse<{ order_code: string; terminal: boolean; webhook_return: number; stored_return: number | null }>(
        db,
        `SELECT o.order_code, s.is_terminal OR coalesce(latest_status.is_terminal, false) AS terminal,
                CAST(json_extract_string(w.body, '$.Fee.Return') AS INTEGER) AS webhook_return, CAST(o.price_fr AS INTEGER) AS stored_return
         FROM orders AS o
         JOIN status_codes AS s ON s.carrier = o.carrier AND s.code = o.status
         JOIN (SELECT * FROM callback_events WHERE carrier = 'ghn' AND (body->>'Type') = 'update_fee'
               QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY event_time DESC) = 1) AS w
           ON w.order_code = o.order_code AND w.event_time > o.last_seen_at
         LEFT JOIN (SELECT c.order_code, cs.is_terminal FROM callback_events AS c
                    JOIN status_codes AS cs ON cs.carrier = c.carrier AND cs.code = c.status
                    WHERE c.carrier = 'ghn' AND c.status <> ''
                    QUALIFY row_number() OVER (PARTITION BY c.order_code ORDER BY c.event_time DESC) = 1) AS latest_status
           ON latest_status.order_code = o.order_code
         WHERE o.carrier = 'ghn'
         ORDER BY o.order_code`,
      );
    const before = await feeChanged();
    // Orders a run would leave alone by their status, whose return fee changed since they were looked up.
    const terminal = before.filter((row) => row.terminal && row.stored_return !== row.webhook_return);
    expect(terminal.length).toBeGreaterThan(0);

    const second = await trackGhn();
    expect(second.code, second.stderr).toBe(0);
    const looked = new Set(
      (
        await queryWarehouse<{ order_code: string }>(
          db,
          `SELECT order_code FROM lookup_results WHERE carrier = 'ghn'
           AND run_id = (SELECT run_id FROM runs WHERE carrier = 'ghn' ORDER BY started_at DESC LIMIT 1)`,
        )
      ).map((row) => row.order_code),
    );
    for (const row of before) expect(looked.has(row.order_code), row.order_code).toBe(true);
    expect(await feeChanged()).toEqual([]);
    const stored = await queryWarehouse<{ order_code: string; price_fr: number | null }>(
      db,
      `SELECT order_code, CAST(price_fr AS INTEGER) AS price_fr FROM orders
       WHERE carrier = 'ghn' AND order_code IN (${terminal.map((row) => `'${row.order_code}'`).join(', ')}) ORDER BY order_code`,
    );
    expect(stored).toEqual(terminal.map((row) => ({ order_code: row.order_code, price_fr: row.webhook_return })));
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
