import { describe, expect, it } from 'vitest';
import type { CarrierInstant } from '../../src/carriers/247express/contract.js';
import { finishRun, RUN_STATE_RUNNING, type RunCounts, readRun, startRun } from '../../src/warehouse/run-store.js';
import { WarehouseError } from '../../src/warehouse/warehouse-errors.js';
import { rowsOf, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

const START = {
  runId: 'track-20261111T044307Z-abc123',
  job: 'track',
  source: 'csv:orders.csv',
  startedAt: '2026-11-11T04:43:07.123456Z' as CarrierInstant,
  carrierDay: '2026-11-11',
};
const COUNTS: RunCounts = {
  codesRead: 1_000_000,
  codesRejected: 12,
  codesDuplicate: 300,
  codesToLookUp: 999_688,
  lookedUpOk: 999_000,
  carrierErrors: 600,
  transportErrors: 8,
  deferred: 80,
  lookupsSpent: 999_700,
};

describe('run store', () => {
  it('records a run as running at its start', async () => {
    const { warehouse } = await temp.open();
    await startRun(warehouse, START);
    expect(await readRun(warehouse, START.runId)).toEqual({
      ...START,
      finishedAt: null,
      counts: null,
      exitCode: null,
      exitState: RUN_STATE_RUNNING,
      summary: null,
    });
    expect(await readRun(warehouse, 'no-such-run')).toBeUndefined();
  });

  it('records how a run finished: counts, exit code and state, and the summary as JSON', async () => {
    const { warehouse } = await temp.open();
    await startRun(warehouse, START);
    const summary = { note: 'Phát thành công', failedOrders: [{ orderCode: 'X1', errorCode: 'TIMEOUT' }] };
    await finishRun(warehouse, START.runId, {
      finishedAt: '2026-11-11T05:00:00.000000Z' as CarrierInstant,
      counts: COUNTS,
      exitCode: 3,
      exitState: 'partial',
      summary,
    });
    expect(await readRun(warehouse, START.runId)).toEqual({
      ...START,
      finishedAt: '2026-11-11T05:00:00.000000Z',
      counts: COUNTS,
      exitCode: 3,
      exitState: 'partial',
      summary,
    });
    expect(
      await rowsOf(
        warehouse,
        "SELECT summary->>'$.failedOrders[0].errorCode' AS code, typeof(carrier_day) AS day_type FROM runs",
      ),
    ).toEqual([{ code: 'TIMEOUT', day_type: 'DATE' }]);
  });

  it('marks a resumed run running again, keeping its first start', async () => {
    const { warehouse } = await temp.open();
    await startRun(warehouse, START);
    await finishRun(warehouse, START.runId, {
      finishedAt: '2026-11-11T05:00:00.000000Z' as CarrierInstant,
      counts: COUNTS,
      exitCode: 3,
      exitState: 'partial',
      summary: {},
    });
    await startRun(warehouse, { ...START, startedAt: '2026-11-11T06:00:00.000000Z' as CarrierInstant });
    const resumed = await readRun(warehouse, START.runId);
    expect(resumed).toMatchObject({
      startedAt: START.startedAt,
      finishedAt: null,
      exitCode: null,
      exitState: RUN_STATE_RUNNING,
    });
  });

  it('refuses to finish a run that never started', async () => {
    const { warehouse } = await temp.open();
    const finishing = finishRun(warehouse, 'ghost', {
      finishedAt: '2026-11-11T05:00:00.000000Z' as CarrierInstant,
      counts: COUNTS,
      exitCode: 0,
      exitState: 'ok',
      summary: null,
    });
    await expect(finishing).rejects.toThrow(WarehouseError);
    await expect(finishing).rejects.toThrow(/has no run ghost to finish/);
  });
});
