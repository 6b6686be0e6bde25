import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { SourceError } from '../../src/sources/order-code-source.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

/** Lookups the sandbox received over all keys and days. */
function sandboxReceived(sandbox: RunningSandbox): number {
  return Object.values(sandbox.state.quota.usage()).reduce((n, day) => n + day.lookups + day.refused, 0);
}

describe('tracking a bad-input corpus', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 20 });
    workspace = await trackingWorkspace();
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('rejects each bad row with its reason and source line, and sends no lookup for any of them', async () => {
    const lines = [
      '\uFEFFnote;Order_Code;account',
      'ok;EX100000001;hanoi-shop',
      '',
      'quoted;"EX100000002";hanoi-shop',
      'duplicate;EX100000001;hanoi-shop',
      'short;EX12;hanoi-shop',
      'long;EX1000000000000000000001;hanoi-shop',
      'bad chars;EX1000 0003;hanoi-shop',
      `huge;${'X'.repeat(100_000)};hanoi-shop`,
      'no code;;hanoi-shop',
      'unknown account;EX100000004;hue-shop',
      'ok;EX200000001;saigon-shop',
    ];
    const body = Buffer.concat([
      Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8'),
      Buffer.from([0x62, 0x61, 0x64, 0x3b, 0x45, 0x58, 0xff, 0xfe, 0x31, 0x3b, 0x68, 0x0d, 0x0a]),
      Buffer.from('last;EX300000001;danang-shop\r\n', 'utf8'),
    ]);
    const csv = join(workspace.dir, 'corpus.csv');
    await writeFile(csv, body);

    const summary = await workspace.track(sandbox, [csv]);

    expect(summary.counters.ok).toBe(4);
    expect(summary.codes.duplicate).toBe(1);
    expect(sandboxReceived(sandbox)).toBe(4);
    const rejects = await readFile(summary.rejectsFile!, 'utf8');
    for (const [line, code] of [
      [6, 'ORDERCODE_MIN_LENGTH'],
      [7, 'ORDERCODE_MAX_LENGTH'],
      [8, 'ORDERCODE_FORMAT_EXCEPTION'],
      [9, 'UNREADABLE_ROW'],
      [10, 'UNREADABLE_ROW'],
      [11, 'UNKNOWN_ACCOUNT'],
      [13, 'UNREADABLE_ROW'],
    ] as const) {
      expect(rejects).toMatch(new RegExp(`corpus\\.csv:${line},[^\\n]*${code}`));
    }
    expect(summary.codes.rejected).toBe(7);
    const rejected = await workspace.query<{ order_code: string; error_code: string }>(
      `SELECT order_code, error_code FROM lookup_results WHERE run_id = '${summary.runId}' AND outcome = 'rejected' ORDER BY order_code`,
    );
    expect(rejected).toEqual([
      { order_code: 'EX1000 0003', error_code: 'ORDERCODE_FORMAT_EXCEPTION' },
      { order_code: 'EX1000000000000000000001', error_code: 'ORDERCODE_MAX_LENGTH' },
      { order_code: 'EX100000004', error_code: 'UNKNOWN_ACCOUNT' },
      { order_code: 'EX12', error_code: 'ORDERCODE_MIN_LENGTH' },
    ]);
  });

  it('fails with one line naming the columns when there is no order_code column, spending nothing', async () => {
    const csv = await workspace.writeCsv('nocolumn.csv', [
      ['code', 'account'],
      ['EX100000001', 'hanoi-shop'],
    ]);
    const before = sandboxReceived(sandbox);
    const failure = await workspace.track(sandbox, [csv]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    expect((failure as Error).message).toContain('order_code');
    expect((failure as Error).message.split('\n')).toHaveLength(1);
    expect(sandboxReceived(sandbox)).toBe(before);
    const [run] = await workspace.query<{ exit_state: string; exit_code: number }>(
      `SELECT exit_state, exit_code FROM runs WHERE source LIKE '%nocolumn.csv%'`,
    );
    expect(run).toEqual({ exit_state: 'bad_input', exit_code: 2 });
  });
});
