/** A tracking run ends 0 only when every code got an answer that settles it: a wrong key and EXCEPTION alert. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../src/carriers/client/answer-size.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import { describeSummary } from '../../src/cli/track-summary-lines.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const CONCURRENCY = 4;

/** Passes every request on to the sandbox and counts the tracking lookups per API key. */
async function countingProxy(target: string): Promise<{ url: string; counts: Map<string, number>; server: Server }> {
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const key = new URL(req.url ?? '/', 'http://proxy').searchParams.get('apiKey') ?? '';
    counts.set(key, (counts.get(key) ?? 0) + 1);
    void request(`${target}${req.url ?? '/'}`, { method: 'GET' })
      .then(async (answer) => {
        const body = Buffer.from(await answer.body.arrayBuffer());
        res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(body);
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, server };
}

describe('the exit rule of a tracking run', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  let csv: string;
  let codes: string[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 70 });
    proxy = await countingProxy(sandbox.url);
    const plans = [...sandbox.state.world.orders()];
    codes = plans.map((p) => p.code);
    workspace = await trackingWorkspace();
    csv = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...plans.map((p) => [p.code, p.account.alias]),
    ]);
  });

  beforeEach(() => {
    proxy.counts.clear();
    sandbox.state.faults.configure({ exceptionRate: 0 });
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy.server.close(resolve));
    await sandbox.stop();
    await workspace.dispose();
  });

  it('stops a key the carrier does not know after the lookups in flight, defers its orders and exits 1', async () => {
    const accounts = sandbox.state.world.accounts;
    const wrong = accounts[0]!.alias;
    const keys = new KeyRing(
      accounts.map((a) => [a.alias, a.alias === wrong ? 'not-a-key-of-this-carrier' : a.apiKey]),
    );
    const summary = await workspace.track(sandbox, [csv], {
      keys,
      client: { trackingUrl: proxy.url, timeoutMs: 2_000, maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES, connections: 16 },
      quota: { maxConcurrent: CONCURRENCY },
    });

    const sent = proxy.counts.get('not-a-key-of-this-carrier') ?? 0;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(CONCURRENCY);
    expect(summary.exitCode).toBe(1);
    expect(summary.exitState).toBe('failed');
    expect(summary.counters.ok).toBe(codes.length - 70);
    expect(summary.counters.deferredByReason).toEqual({ key_not_found: 70 });
    const rows = await workspace.query<{ outcome: string; error_code: string; n: number | string }>(
      `SELECT outcome, error_code, count(*) AS n FROM lookup_results
       WHERE run_id = '${summary.runId}' AND account_alias = '${wrong}' GROUP BY ALL`,
    );
    expect(rows.map((r) => ({ ...r, n: Number(r.n) }))).toEqual([
      { outcome: 'deferred', error_code: 'KEY_NOT_FOUND', n: 70 },
    ]);
    const warnings = workspace.logLines.filter((line) => line.includes('the carrier does not know'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(wrong);
    expect(workspace.logLines.join('\n')).not.toContain('not-a-key-of-this-carrier');
  });

  it('exits 1 when the carrier answers EXCEPTION to every attempt, and the summary says how many failed', async () => {
    sandbox.state.faults.configure({ exceptionRate: 1 });
    const twelve = await workspace.writeCsv('twelve.csv', [
      ['order_code', 'account'],
      ...[...sandbox.state.world.orders()].slice(0, 12).map((p) => [p.code, p.account.alias]),
    ]);
    const summary = await workspace.track(sandbox, [twelve], {
      client: { trackingUrl: proxy.url, timeoutMs: 2_000, maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES, connections: 16 },
      retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5 },
    });

    expect(summary.counters.carrierErrorsByCode).toEqual({ EXCEPTION: 12 });
    expect(summary.exitCode).toBe(1);
    expect(summary.exitState).toBe('failed');
    expect(summary.failedOrders).toHaveLength(12);
    expect(summary.failedOrders.every((f) => f.errorCode === 'EXCEPTION')).toBe(true);
    expect(summary.failedOrdersTotal).toBe(12);
    expect([...proxy.counts.values()].reduce((a, b) => a + b, 0)).toBe(24);

    const printed = describeSummary(summary, workspace.dbPath).split('\n');
    expect(printed.filter((line) => line.startsWith('  failed: '))).toHaveLength(10);
    expect(printed).toContain(`  and 2 more failed (lookup_results of run ${summary.runId})`);
  });

  it('exits 0 when every code got a result or a permanent answer about the order', async () => {
    const small = await workspace.writeCsv('settled.csv', [
      ['order_code', 'account'],
      [codes[0]!, sandbox.state.world.findOrder(codes[0]!)!.account.alias],
      ['EXNOSUCHORDER1', sandbox.state.world.accounts[0]!.alias],
    ]);
    const summary = await workspace.track(sandbox, [small]);

    expect(summary.counters.carrierErrorsByCode).toEqual({ ORDERCODE_NOT_FOUND: 1 });
    expect(summary.exitCode).toBe(0);
  });
});
