import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CarrierInstant } from '../../src/carrier/contract.js';
import { readRawSpoolFile, spoolFilesOfRun } from '../../src/pipeline/raw-spool.js';
import { BatchFiles } from '../../src/pipeline/tracking/batch-files.js';
import { answerSpoolLine } from '../../src/warehouse/snapshot-spool-format.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { trackingWorkspace } from '../support/tracking-harness.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const SEEN = '2026-11-20T15:00:00.000000Z' as CarrierInstant;
/** Bodies as a carrier may send them: Vietnamese text, escapes, line breaks between tokens. */
const BODIES = [
  '{"errorCode":null,"orderCode":"247EXP0001","receiverName":"Nguyễn Thị Hương","note":"a \\"quoted\\" \\\\ \\u1ea1 text"}',
  '{\r\n  "errorCode": "ORDERCODE_NOT_FOUND",\n  "errorMessage": "Không tìm thấy"\n}',
];

describe('raw spool', () => {
  it('keeps each answer as it came, written as the batch gathers', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'raw-spool-'));
    dirs.push(dataDir);
    const spoolDir = join(dataDir, 'spool');
    const files = new BatchFiles(spoolDir, dataDir, 'run-1');
    files.addSnapshot(
      { runId: 'run-1', orderCode: '247EXP0001', accountAlias: 'shop-a', seenAt: SEEN },
      Buffer.from(BODIES[0]!),
    );
    // Enough lines to pass a chunk, so that writes happen before the batch finishes.
    for (let i = 0; i < 4_000; i++)
      files.addOtherAnswer(
        { runId: 'run-1', orderCode: `247EXP${1000 + i}`, accountAlias: 'shop-b', seenAt: SEEN },
        Buffer.from(BODIES[1]!),
      );
    const written = await files.finish();

    const read = await readRawSpoolFile(written.rawSpoolFile!);
    expect(read).toHaveLength(4_001);
    const byCode = new Map(read.map((response) => [response.orderCode, response]));
    expect(byCode.get('247EXP0001')).toEqual({
      orderCode: '247EXP0001',
      accountAlias: 'shop-a',
      seenAt: SEEN,
      body: BODIES[0],
    });
    // Line breaks between tokens become spaces: the same JSON, on one line.
    expect(byCode.get('247EXP4999')).toEqual({
      orderCode: '247EXP4999',
      accountAlias: 'shop-b',
      seenAt: SEEN,
      body: BODIES[1]!.replace(/[\r\n]/g, ' '),
    });
    expect(JSON.parse(byCode.get('247EXP1000')!.body)).toEqual(JSON.parse(BODIES[1]!));
    // The loader's file holds the snapshot's line as answerSpoolLine writes it.
    const snapshotLine = `${answerSpoolLine({ runId: 'run-1', orderCode: '247EXP0001', accountAlias: 'shop-a', seenAt: SEEN, body: BODIES[0]! })}\n`;
    expect(await readFile(written.snapshotFile!.path, 'utf8')).toBe(snapshotLine);
    // Its longest line sizes DuckDB's line reader.
    expect(written.snapshotFile!.longestLineBytes).toBe(Buffer.byteLength(snapshotLine));
    await files.removeSnapshotFile();
    expect(await readdir(spoolDir)).toEqual([]);
    expect((await spoolFilesOfRun(dataDir, 'run-1')).map((file) => file.path)).toEqual([written.rawSpoolFile]);
  });

  it('leaves no file for a batch without answers', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'raw-spool-'));
    dirs.push(dataDir);
    expect(await new BatchFiles(join(dataDir, 'spool'), dataDir, 'run-1').finish()).toEqual({
      snapshotFile: undefined,
      rawSpoolFile: undefined,
    });
    expect(await spoolFilesOfRun(dataDir, 'run-1')).toEqual([]);
  });
});

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
