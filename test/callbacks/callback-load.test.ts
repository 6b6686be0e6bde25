/**
 * The receiver as a real process under load on loopback: 20,000 callbacks at 1,000 per second with 2%
 * resends, 1% bad credentials and 1% malformed bodies; and the same kind of load cut by SIGKILL, then
 * a restart. Every acknowledged event ends up in callback_events exactly once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type LoadOutcome,
  type LoadPlan,
  latencyPercentile,
  runCallbackLoad,
} from '../../bench/support/callback-load.js';
import { httpGet } from '../sandbox/sandbox-http.js';
import { queryWarehouse, type ReceiverProcess, startReceiverProcess } from '../support/callback-receiver-process.js';

const KEYS = { 'hanoi-shop': 'load-key-hanoi-0001', 'saigon-shop': 'load-key-saigon-0002' };
const ENV = {
  PARCEL_RECON_API_KEYS: Object.entries(KEYS)
    .map(([alias, key]) => `${alias}=${key}`)
    .join(','),
};
const SHARES: LoadPlan['perHundred'] = { duplicate: 2, badCredential: 1, malformed: 1 };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function workspace(): Promise<{ dir: string; dbPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-callback-load-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { dir, dbPath: join(dir, 'recon.duckdb') };
}

async function receiverOn(dbPath: string): Promise<ReceiverProcess> {
  const receiver = await startReceiverProcess(['--db', dbPath, '--ingest-interval-ms', '1000'], ENV);
  cleanups.push(() => receiver.stop());
  return receiver;
}

async function storedEventIds(dbPath: string): Promise<string[]> {
  return (await queryWarehouse<{ event_id: string }>(dbPath, 'SELECT event_id FROM callback_events')).map(
    (r) => r.event_id,
  );
}

/** Every rejected request got the status its fault calls for. */
function expectRejectionsAnswered(outcomes: readonly LoadOutcome[]): void {
  const expected: Record<string, number> = { bad_credential: 401, not_json: 400, schema_breach: 400, oversized: 413 };
  for (const o of outcomes)
    if (o.kind in expected && o.status !== null) expect(o.status, o.kind).toBe(expected[o.kind]);
}

describe('callback receiver under load', () => {
  it('stores every acknowledged event of 20,000 at 1,000/s exactly once, and answers every bad one 400/401/413', {
    timeout: 180_000,
  }, async () => {
    const { dbPath } = await workspace();
    const receiver = await receiverOn(dbPath);
    const report = await runCallbackLoad(receiver.url, {
      total: 20_000,
      perSecond: 1_000,
      perHundred: SHARES,
      keys: Object.values(KEYS),
      orderPrefix: 'LD',
    });
    const outcomes = report.outcomes;
    const count = (kind: string) => outcomes.filter((o) => o.kind === kind).length;
    console.log(
      `load: ${outcomes.length} requests in ${(report.durationMs / 1000).toFixed(1)} s, sent at ${report.sendRate.toFixed(0)}/s; ` +
        `latency p50 ${latencyPercentile(outcomes, 50).toFixed(1)} ms, p99 ${latencyPercentile(outcomes, 99).toFixed(1)} ms, max ${latencyPercentile(outcomes, 100).toFixed(1)} ms`,
    );
    expect(report.sendRate).toBeGreaterThan(900);
    expect(count('duplicate')).toBeGreaterThanOrEqual(390);
    expect(count('bad_credential')).toBe(200);
    expect(count('not_json') + count('schema_breach') + count('oversized')).toBe(200);

    // Nobody lost: every request got an answer; every good one and every resend was acknowledged.
    expect(outcomes.filter((o) => o.status === null)).toEqual([]);
    for (const o of outcomes)
      expect(o.accepted, `${o.kind} answered ${o.status}`).toBe(o.kind === 'good' || o.kind === 'duplicate');
    expectRejectionsAnswered(outcomes);

    const health = JSON.parse((await httpGet(`${receiver.url}/health`)).text) as {
      acknowledged: number;
      journal: { writes: number };
    };
    console.log(`journal: ${health.acknowledged} callbacks acknowledged in ${health.journal.writes} durable writes`);
    expect(health.acknowledged).toBe(outcomes.filter((o) => o.accepted).length);
    expect(await receiver.stop()).toBe(0);
    const acknowledged = new Set(outcomes.filter((o) => o.accepted).map((o) => o.eventId!));
    expect(acknowledged.size).toBe(count('good'));
    const stored = await storedEventIds(dbPath);
    expect(stored.length).toBe(acknowledged.size);
    expect(new Set(stored)).toEqual(acknowledged);
    const [failures] = await queryWarehouse<{ n: number }>(
      dbPath,
      "SELECT count(*)::INT AS n FROM delivery_failures WHERE source = 'callback'",
    );
    const [events16] = await queryWarehouse<{ n: number }>(
      dbPath,
      "SELECT count(*)::INT AS n FROM callback_events WHERE status = '16'",
    );
    expect(failures!.n).toBe(events16!.n);
  });

  it('keeps every event acknowledged before a SIGKILL: present after the restart', { timeout: 180_000 }, async () => {
    const { dbPath } = await workspace();
    const receiver = await startReceiverProcess(['--db', dbPath, '--ingest-interval-ms', '700'], ENV);
    let killed: Promise<void> | undefined;
    const report = await runCallbackLoad(receiver.url, {
      total: 8_000,
      perSecond: 1_000,
      perHundred: SHARES,
      keys: Object.values(KEYS),
      orderPrefix: 'KL',
      // Killed once 2,000 events are acknowledged, whatever the machine's pace: the rest of the load meets a dead port.
      onAnswered: (acknowledged) => {
        if (acknowledged >= 2_000) killed ??= receiver.kill();
      },
    });
    await killed;
    const outcomes = report.outcomes;
    const acknowledged = new Set(outcomes.filter((o) => o.accepted).map((o) => o.eventId!));
    const unanswered = outcomes.filter((o) => o.status === null).length;
    console.log(`sigkill: ${acknowledged.size} events acknowledged before the kill, ${unanswered} requests unanswered`);
    expect(outcomes.filter((o) => o.accepted).length).toBeGreaterThanOrEqual(2_000);
    expect(unanswered).toBeGreaterThan(0);
    expectRejectionsAnswered(outcomes);

    // The restart loads what the killed receiver journaled (and what it had loaded stays).
    const restarted = await receiverOn(dbPath);
    expect(await restarted.stop()).toBe(0);
    const stored = new Set(await storedEventIds(dbPath));
    const missing = [...acknowledged].filter((id) => !stored.has(id));
    expect(missing).toEqual([]);
    // Nothing stored that was not sent as a good callback.
    const sent = new Set(outcomes.filter((o) => o.eventId !== null).map((o) => o.eventId!));
    expect([...stored].filter((id) => !sent.has(id))).toEqual([]);
  });
});
