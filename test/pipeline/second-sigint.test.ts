import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { logLine, sandboxEnv, startCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

/** Enough codes that recording each one a stopped run has not reached, a batch at a time, takes seconds. */
const ORDERS_PER_ACCOUNT = 50_000;

describe('a second SIGINT to track', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;

  beforeAll(async () => {
    // Answers slower than the grace period: only the second signal can end the run soon.
    sandbox = await startTestSandbox({
      ordersPerAccount: ORDERS_PER_ACCOUNT,
      faults: { latencyMinMs: 30_000, latencyMaxMs: 30_000 },
    });
    workspace = await trackingWorkspace();
  }, 120_000);

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('ends the process within 2 s, whatever is left of a large work list', { timeout: 180_000 }, async () => {
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias]);
    const csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...codes]);
    const child = startCli(['track', '--input', csv, '--db', workspace.dbPath, '--json', '--no-progress'], {
      ...sandboxEnv(sandbox),
    });
    let signalled = 0;
    try {
      await logLine(child, 'inputs staged', 120_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      child.kill('SIGINT');
      await logLine(child, 'stop requested');
      signalled = performance.now();
      child.kill('SIGINT');
      await child.ended;
    } finally {
      child.kill('SIGKILL');
    }
    const ended = await child.ended;
    expect(performance.now() - signalled).toBeLessThan(2_000);
    expect(child.signalCode).toBeNull();
    expect(ended.code, ended.stderr).toBe(3);
    // Finished as interrupted, or, when it had to give up mid-statement, cut off for the next run to resume.
    const warehouse = await Warehouse.open(workspace.dbPath, { readOnly: true });
    try {
      const runs = (await warehouse.readAll('SELECT exit_state FROM runs')).getRowObjectsJS();
      expect(runs).toEqual([{ exit_state: expect.stringMatching(/^(interrupted|running)$/) }]);
    } finally {
      await warehouse.close();
    }
  });
});
