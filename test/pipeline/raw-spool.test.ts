import { describe, expect, it } from 'vitest';
import { readRawSpoolFile, spoolFilesOfRun } from '../../src/pipeline/raw-spool.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { trackingWorkspace } from '../support/tracking-harness.js';

describe('raw spool of a tracking run against the sandbox', () => {
  it('keeps every answer the carrier sent: EXCEPTION answers that were retried and APIKEY_LIMIT refusals too', async () => {
    const sandbox = await startTestSandbox({
      ordersPerAccount: 30,
      limits: { perKeyDaily: 20 },
      faults: { exceptionRate: 0.3 },
    });
    const workspace = await trackingWorkspace();
    try {
      const orders = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias] as const);
      const csv = await workspace.writeCsv('orders.csv', [['order_code', 'account'], ...orders]);
      const summary = await workspace.track(sandbox, [csv], { retry: { attempts: 8, minDelayMs: 1, maxDelayMs: 5 } });
      const answers: string[] = [];
      for (const file of await spoolFilesOfRun(workspace.dir, summary.runId))
        for (const response of await readRawSpoolFile(file.path)) answers.push(response.body);
      const errorCodes = answers.map((body) => (JSON.parse(body) as { errorCode: string | null }).errorCode);
      expect(errorCodes).toContain('EXCEPTION');
      expect(errorCodes).toContain('APIKEY_LIMIT');
      // One answer per request sent: every attempt of every order.
      const [sent] = await workspace.query<{ attempts: number }>(
        'SELECT CAST(sum(attempts) AS INTEGER) AS attempts FROM lookup_results',
      );
      expect(answers).toHaveLength(sent!.attempts);
    } finally {
      await sandbox.stop();
      await workspace.dispose();
    }
  });
});
