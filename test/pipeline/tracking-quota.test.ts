import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { carrierDayOf } from '../../src/carriers/247express/contract.js';
import { quotaCommand } from '../../src/cli/commands/quota-command.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { DAY_MS, startTestSandbox } from '../sandbox/sandbox-http.js';
import { sandboxLookups, type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

/** hanoi-shop has more orders than its limit; the other two fewer. */
const ORDERS = { 'hanoi-shop': 80, 'saigon-shop': 30, 'danang-shop': 30 } as const;
const LIMIT = 50;

/** What `parcel-recon quota` prints, run in this process. */
async function quotaOutput(args: string[]): Promise<string> {
  let printed = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    printed += chunk.toString();
    return true;
  });
  try {
    await quotaCommand().parseAsync(args, { from: 'user' });
  } finally {
    write.mockRestore();
  }
  return printed;
}

describe('tracking within the daily quotas', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let csv: string;

  beforeEach(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 100, limits: { perKeyDaily: LIMIT } });
    workspace = await trackingWorkspace();
    const rows: string[][] = [['order_code', 'account']];
    for (const account of sandbox.state.world.accounts) {
      const count = ORDERS[account.alias as keyof typeof ORDERS];
      for (let i = 0; i < count; i++) rows.push([sandbox.state.world.orderCode(account.index, i), account.alias]);
    }
    csv = await workspace.writeCsv('orders.csv', rows);
  });

  afterEach(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  const ledger = async (day: string) =>
    Object.fromEntries(
      (
        await workspace.query<{ key_alias: string; lookups: string | number }>(
          `SELECT key_alias, lookups FROM quota_usage WHERE carrier_day = '${day}'`,
        )
      ).map((r) => [r.key_alias, Number(r.lookups)]),
    );

  it('spends exactly the per-key limit, lets the other keys finish, and resumes the next carrier day', async () => {
    const day = carrierDayOf(sandbox.state.clock.now());
    const first = await workspace.track(sandbox, [csv], { quota: { perKeyDaily: LIMIT } });

    expect(sandboxLookups(sandbox, day)).toEqual({ 'hanoi-shop': LIMIT, 'saigon-shop': 30, 'danang-shop': 30 });
    expect(sandbox.state.quota.usage()[day]!.refused).toBe(0);
    expect(first.counters.ok).toBe(LIMIT + 60);
    expect(first.counters.deferredByReason).toEqual({ quota: 30 });
    expect(first.exitCode).toBe(3);
    expect(await ledger(day)).toEqual({ 'hanoi-shop': LIMIT, 'saigon-shop': 30, 'danang-shop': 30, '*': LIMIT + 60 });

    const second = await workspace.track(sandbox, [csv], { quota: { perKeyDaily: LIMIT } });
    expect(sandboxLookups(sandbox, day)['hanoi-shop']).toBe(LIMIT);
    expect(second.quota.find((q) => q.alias === 'hanoi-shop')!.spentThisRun).toBe(0);
    // hanoi-shop's orders all wait; the other keys have 20 lookups left today for their 30 orders.
    expect(second.counters.deferredByReason).toEqual({ quota: ORDERS['hanoi-shop'] + 10 + 10 });

    sandbox.advance(DAY_MS);
    const nextDay = carrierDayOf(sandbox.state.clock.now());
    const third = await workspace.track(sandbox, [csv], { quota: { perKeyDaily: LIMIT } });
    expect(sandboxLookups(sandbox, nextDay)['hanoi-shop']).toBe(LIMIT);
    expect(third.quota.find((q) => q.alias === 'hanoi-shop')!.spentThisRun).toBe(LIMIT);
    // The orders deferred on the first day were never seen, so they went first.
    const [seen] = await workspace.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM orders WHERE account_alias = 'hanoi-shop'`,
    );
    expect(Number(seen!.n)).toBe(ORDERS['hanoi-shop']);
    expect(await ledger(nextDay)).toMatchObject({ 'hanoi-shop': LIMIT });
  });

  it('stops a key the carrier answers APIKEY_LIMIT for, and spends nothing more on it that day', async () => {
    const day = carrierDayOf(sandbox.state.clock.now());
    const first = await workspace.track(sandbox, [csv]);

    // One refused lookup tells the pipeline the key is spent; the ledger then holds the key's limit.
    expect(sandboxLookups(sandbox, day)['hanoi-shop']).toBeLessThanOrEqual(LIMIT + 16);
    expect(sandbox.state.quota.usage()[day]!.perKey['hanoi-shop']!.lookups).toBe(LIMIT);
    expect(first.counters.ok).toBe(LIMIT + 60);
    expect(first.counters.deferredByReason.key_limit ?? 0).toBeGreaterThan(0);
    expect(first.counters.deferred).toBe(30);
    // The ledger keeps what was sent, and apart from it the carrier's answer that the limit was reached.
    const counted = await ledger(day);
    const atCarrier = sandboxLookups(sandbox, day)['hanoi-shop']!;
    expect(counted['hanoi-shop']).toBeGreaterThanOrEqual(atCarrier);
    expect(counted['hanoi-shop']).toBeLessThanOrEqual(atCarrier + 16);
    expect(counted['*']).toBe(counted['hanoi-shop']! + counted['saigon-shop']! + counted['danang-shop']!);
    const reported = await workspace.query<{ key_alias: string }>(
      `SELECT key_alias FROM quota_limit_answers WHERE carrier_day = '${day}'`,
    );
    expect(reported).toEqual([{ key_alias: 'hanoi-shop' }]);

    const before = sandboxLookups(sandbox, day)['hanoi-shop'];
    await workspace.track(sandbox, [csv]);
    expect(sandboxLookups(sandbox, day)['hanoi-shop']).toBe(before);

    // `quota` shows both facts: the lookups sent, and that the carrier said the key's limit was reached.
    const shown = await quotaOutput(['--db', workspace.dbPath, '--day', day, '--json']);
    const keys = (
      JSON.parse(shown) as { keys: { alias: string; used: number; left: number; limitReportedAt: string | null }[] }
    ).keys;
    const hanoi = keys.find((k) => k.alias === 'hanoi-shop')!;
    expect(hanoi.used).toBe(counted['hanoi-shop']);
    expect(hanoi.left).toBe(0);
    // When the carrier said so, in the display time zone with its offset: the same instant in any zone.
    expect(hanoi.limitReportedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00$/);
    const inUtc = JSON.parse(
      await quotaOutput(['--db', workspace.dbPath, '--day', day, '--json', '--time-zone', 'UTC']),
    ).keys as { alias: string; limitReportedAt: string }[];
    const utcReportedAt = inUtc.find((k) => k.alias === 'hanoi-shop')!.limitReportedAt;
    expect(utcReportedAt).toMatch(/\+00:00$/);
    expect(Date.parse(utcReportedAt)).toBe(Date.parse(hanoi.limitReportedAt!));
    const text = await quotaOutput(['--db', workspace.dbPath, '--day', day]);
    expect(text).toMatch(/hanoi-shop +\d+ of 200000 used, 0 left; the carrier answered APIKEY_LIMIT at /);
  });
});
