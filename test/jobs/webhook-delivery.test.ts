import { afterEach, describe, expect, it } from 'vitest';
import { deliverJson } from '../../jobs/webhook-delivery.js';
import { freePort } from '../support/free-port.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** Backoff short enough that retries cost the test no time; the time bounds are what it waits for. */
const QUICK = { minDelayMs: 5, maxDelayMs: 20 };

describe('webhook delivery', () => {
  const receivers: WebhookReceiver[] = [];
  async function receiver(...script: Parameters<typeof startWebhookReceiver>[0] & object) {
    const started = await startWebhookReceiver(script);
    receivers.push(started);
    return started;
  }
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
  });

  it('retries after a 500 and delivers the same body on the second attempt', async () => {
    const hook = await receiver({ status: 500 });
    const outcome = await deliverJson(
      `${hook.url}/hook`,
      { text: 'hi' },
      { retries: 3, timeoutMs: 10_000, backoff: QUICK },
    );
    expect(outcome).toEqual({ delivered: true, attempts: 2 });
    expect(hook.posts.map((p) => p.body)).toEqual([{ text: 'hi' }, { text: 'hi' }]);
    expect(hook.posts[0]!.headers['content-type']).toBe('application/json');
  });

  it('gives up after its retries when every answer is a 500, and after one attempt on another 4xx', async () => {
    const failing = await receiver({ status: 500 }, { status: 502 }, { status: 503 });
    expect(await deliverJson(failing.url, {}, { retries: 2, timeoutMs: 10_000, backoff: QUICK })).toEqual({
      delivered: false,
      attempts: 3,
      reason: 'HTTP 503',
    });
    const refusing = await receiver({ status: 404 }, { status: 404 });
    expect(await deliverJson(refusing.url, {}, { retries: 3, timeoutMs: 10_000, backoff: QUICK })).toEqual({
      delivered: false,
      attempts: 1,
      reason: 'HTTP 404',
    });
    expect(refusing.posts).toHaveLength(1);
  });

  it("waits out a 429's Retry-After that fits in the time bound, and gives up at once on one that does not", async () => {
    const slowDown = await receiver({ status: 429, headers: { 'retry-after': '1' } });
    const outcome = await deliverJson(slowDown.url, {}, { retries: 3, timeoutMs: 10_000, backoff: QUICK });
    expect(outcome).toEqual({ delivered: true, attempts: 2 });
    expect(slowDown.posts[1]!.at - slowDown.posts[0]!.at).toBeGreaterThanOrEqual(1_000);
    const muchLater = await receiver({ status: 429, headers: { 'retry-after': '3600' } });
    const started = Date.now();
    expect(await deliverJson(muchLater.url, {}, { retries: 3, timeoutMs: 5_000 })).toEqual({
      delivered: false,
      attempts: 1,
      reason: 'HTTP 429',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('ends within its time bound when the receiver is down or never answers', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/hook`;
    let started = Date.now();
    // Ten retries backing off from 100 ms take longer than the bound: the bound ends them.
    const down = await deliverJson(
      closed,
      {},
      { retries: 10, timeoutMs: 1_000, backoff: { minDelayMs: 100, maxDelayMs: 1_000 } },
    );
    expect(down.delivered).toBe(false);
    expect(down).toMatchObject({ reason: expect.stringMatching(/^ECONNREFUSED/) });
    expect(down.attempts).toBeGreaterThan(1);
    expect(down.attempts).toBeLessThan(11);
    expect(Date.now() - started).toBeLessThan(2_000);
    const hung = await receiver('hang');
    started = Date.now();
    expect(await deliverJson(hung.url, {}, { retries: 3, timeoutMs: 500 })).toEqual({
      delivered: false,
      attempts: 1,
      reason: 'no answer within 500 ms',
    });
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});
