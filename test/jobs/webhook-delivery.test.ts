import { describe, it, type TestContext } from 'vitest';
import { deliverJson } from '../../jobs/webhook-delivery.js';
import { freePort } from '../support/free-port.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** A receiver answering as `script` says, closed when the test ends. */
async function startedReceiver(
  test: TestContext,
  ...script: Parameters<typeof startWebhookReceiver>[0] & object
): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(script);
  test.onTestFinished(() => started.close());
  return started;
}

/** Backoff short enough that retries cost the test no time; the time bounds are what it waits for. */
const QUICK = { minDelayMs: 5, maxDelayMs: 20 };

// The cases share nothing but wait on time bounds and Retry-After: they run side by side.
describe.concurrent('webhook delivery', () => {
  it('retries after a 500 and delivers the same body on the second attempt', async (test) => {
    const hook = await startedReceiver(test, { status: 500 });
    const outcome = await deliverJson(
      `${hook.url}/hook`,
      { text: 'hi' },
      { retries: 3, timeoutMs: 10_000, backoff: QUICK },
    );
    test.expect(outcome).toEqual({ delivered: true, attempts: 2 });
    test.expect(hook.posts.map((p) => p.body)).toEqual([{ text: 'hi' }, { text: 'hi' }]);
    test.expect(hook.posts[0]!.headers['content-type']).toBe('application/json');
  });

  it('gives up after its retries when every answer is a 500, and after one attempt on another 4xx', async (test) => {
    const failing = await startedReceiver(test, { status: 500 }, { status: 502 }, { status: 503 });
    test.expect(await deliverJson(failing.url, {}, { retries: 2, timeoutMs: 10_000, backoff: QUICK })).toEqual({
      delivered: false,
      attempts: 3,
      reason: 'HTTP 503',
    });
    const refusing = await startedReceiver(test, { status: 404 }, { status: 404 });
    test.expect(await deliverJson(refusing.url, {}, { retries: 3, timeoutMs: 10_000, backoff: QUICK })).toEqual({
      delivered: false,
      attempts: 1,
      reason: 'HTTP 404',
    });
    test.expect(refusing.posts).toHaveLength(1);
  });

  it("waits out a 429's Retry-After that fits in the time bound, and gives up at once on one that does not", async (test) => {
    const slowDown = await startedReceiver(test, { status: 429, headers: { 'retry-after': '1' } });
    const outcome = await deliverJson(slowDown.url, {}, { retries: 3, timeoutMs: 10_000, backoff: QUICK });
    test.expect(outcome).toEqual({ delivered: true, attempts: 2 });
    test.expect(slowDown.posts[1]!.at - slowDown.posts[0]!.at).toBeGreaterThanOrEqual(1_000);
    const muchLater = await startedReceiver(test, { status: 429, headers: { 'retry-after': '3600' } });
    const started = Date.now();
    test.expect(await deliverJson(muchLater.url, {}, { retries: 3, timeoutMs: 5_000 })).toEqual({
      delivered: false,
      attempts: 1,
      reason: 'HTTP 429',
    });
    test.expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('ends within its time bound when the receiver is down or never answers', async (test) => {
    const closed = `http://127.0.0.1:${await freePort()}/hook`;
    let started = Date.now();
    // Ten retries backing off from 100 ms take longer than the bound: the bound ends them.
    const down = await deliverJson(
      closed,
      {},
      { retries: 10, timeoutMs: 1_000, backoff: { minDelayMs: 100, maxDelayMs: 1_000 } },
    );
    test.expect(down.delivered).toBe(false);
    test.expect(down).toMatchObject({ reason: test.expect.stringMatching(/^ECONNREFUSED/) });
    test.expect(down.attempts).toBeGreaterThan(1);
    test.expect(down.attempts).toBeLessThan(11);
    test.expect(Date.now() - started).toBeLessThan(2_000);
    const hung = await startedReceiver(test, 'hang');
    started = Date.now();
    test.expect(await deliverJson(hung.url, {}, { retries: 3, timeoutMs: 500 })).toEqual({
      delivered: false,
      attempts: 1,
      reason: 'no answer within 500 ms',
    });
    test.expect(Date.now() - started).toBeLessThan(1_500);
  });
});
