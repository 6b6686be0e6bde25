import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CarrierInstant, TrackingSnapshotWire } from '../../src/carriers/247express/contract.js';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import {
  appendRunInputs,
  countRunWork,
  type RunInputRow,
  type RunWorkItem,
  runInputCounts,
  streamRunWork,
} from '../../src/warehouse/run-input-store.js';
import { loadLookupBatch } from '../../src/warehouse/snapshot-loader.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';
import { loaded, rowsOf, snapshotOf, trackingWire, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

const OTHER_CALLBACKS = 200_000;

interface ProfileNode {
  readonly operator_type?: string;
  readonly operator_cardinality?: number;
  readonly extra_info?: { readonly Table?: string };
  readonly children?: readonly ProfileNode[];
}

/** Rows that the profiled statement's scans of `callback_events` passed on, after the filters pushed into them. */
function callbackRowsRead(node: ProfileNode): number {
  const own =
    node.operator_type === 'TABLE_SCAN' && /(^|\.)callback_events$/.test(node.extra_info?.Table ?? '')
      ? (node.operator_cardinality ?? 0)
      : 0;
  return own + (node.children ?? []).reduce((sum, child) => sum + callbackRowsRead(child), 0);
}

function input(
  seq: number,
  orderCode: string,
  accountAlias: string | null = 'shop-a',
  reject: string | null = null,
): RunInputRow {
  return {
    seq,
    orderCode,
    accountAlias,
    origin: `orders.csv:${seq + 1}`,
    rejectCode: reject,
    rejectReason: reject === null ? null : `rejected: ${reject}`,
  };
}

async function workOf(
  warehouse: Warehouse,
  runId: string,
  refreshTerminal = false,
  chunkSize?: number,
): Promise<RunWorkItem[][]> {
  const chunks: RunWorkItem[][] = [];
  for await (const chunk of streamRunWork(warehouse, runId, { refreshTerminal, chunkSize, workDir: await temp.dir() }))
    chunks.push(chunk);
  return chunks;
}

async function seeOrder(
  warehouse: Warehouse,
  spoolDir: string,
  orderCode: string,
  seenAt: string,
  edit: (w: TrackingSnapshotWire) => void = () => {},
): Promise<void> {
  const wire = trackingWire(orderCode);
  edit(wire);
  await loadLookupBatch(
    warehouse,
    { snapshots: [loaded(snapshotOf(wire), seenAt, 'earlier-run')], results: [] },
    spoolDir,
  );
}

describe('appendRunInputs', () => {
  it('stores every row in one bulk statement, and ignores rows the run already has', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const rows = [
      input(1, 'CODE00001'),
      input(2, 'bad code', 'shop-a', 'ORDERCODE_FORMAT'),
      input(3, 'CODE00002', null),
    ];
    await appendRunInputs(warehouse, 'run-1', rows, spoolDir, DEFAULT_CARRIER_ID);
    await appendRunInputs(warehouse, 'run-1', rows, spoolDir, DEFAULT_CARRIER_ID);
    expect(await rowsOf(warehouse, 'SELECT * EXCLUDE (carrier) FROM run_inputs ORDER BY seq')).toEqual([
      {
        run_id: 'run-1',
        seq: '1',
        order_code: 'CODE00001',
        account_alias: 'shop-a',
        origin: 'orders.csv:2',
        reject_code: null,
        reject_reason: null,
      },
      {
        run_id: 'run-1',
        seq: '2',
        order_code: 'bad code',
        account_alias: 'shop-a',
        origin: 'orders.csv:3',
        reject_code: 'ORDERCODE_FORMAT',
        reject_reason: 'rejected: ORDERCODE_FORMAT',
      },
      {
        run_id: 'run-1',
        seq: '3',
        order_code: 'CODE00002',
        account_alias: null,
        origin: 'orders.csv:4',
        reject_code: null,
        reject_reason: null,
      },
    ]);
    expect(await readdir(spoolDir)).toEqual([]);
  });
});

describe('streamRunWork, countRunWork and runInputCounts', () => {
  it('yields each valid code once with its first occurrence, skipping rejected rows and other runs', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await appendRunInputs(
      warehouse,
      'run-1',
      [
        input(1, 'CODE00002', null, 'UNKNOWN_ACCOUNT'),
        input(2, 'CODE00001', 'shop-a'),
        input(3, 'CODE00002', 'shop-b'),
        input(4, 'CODE00001', 'shop-c'),
        input(5, 'CODE00003', null),
        input(6, 'CODE00002', 'shop-d'),
        input(7, 'x', 'shop-a', 'ORDERCODE_MIN_LENGTH'),
      ],
      spoolDir,
      DEFAULT_CARRIER_ID,
    );
    await appendRunInputs(warehouse, 'run-other', [input(1, 'CODE00099')], spoolDir, DEFAULT_CARRIER_ID);

    expect(await workOf(warehouse, 'run-1')).toEqual([
      [
        { orderCode: 'CODE00001', accountAlias: 'shop-a', origin: 'orders.csv:3', storedBefore: false },
        { orderCode: 'CODE00002', accountAlias: 'shop-b', origin: 'orders.csv:4', storedBefore: false },
        { orderCode: 'CODE00003', accountAlias: null, origin: 'orders.csv:6', storedBefore: false },
      ],
    ]);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: false })).toBe(3);
    expect(await runInputCounts(warehouse, 'run-1')).toEqual({ read: 7, rejected: 2, duplicate: 2 });
    expect(await runInputCounts(warehouse, 'no-such-run')).toEqual({ read: 0, rejected: 0, duplicate: 0 });
  });

  it('orders never-seen orders first, then the least recently seen, then source order', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await seeOrder(warehouse, spoolDir, 'SEEN_LATE', '2026-11-10T00:00:00.000000Z');
    await seeOrder(warehouse, spoolDir, 'SEEN_EARLY', '2026-11-01T00:00:00.000000Z');
    await appendRunInputs(
      warehouse,
      'run-1',
      [input(1, 'SEEN_LATE'), input(2, 'NEW_00002'), input(3, 'SEEN_EARLY'), input(4, 'NEW_00001')],
      spoolDir,
      DEFAULT_CARRIER_ID,
    );

    const [chunk] = await workOf(warehouse, 'run-1');
    expect(chunk?.map((item) => item.orderCode)).toEqual(['NEW_00002', 'NEW_00001', 'SEEN_EARLY', 'SEEN_LATE']);
    // What the loader may skip for a batch of new orders only: the warehouse held none of them.
    expect(chunk?.map((item) => item.storedBefore)).toEqual([false, false, true, true]);
  });

  it('skips orders whose stored status is terminal, unless asked to refresh them', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await seeOrder(warehouse, spoolDir, 'DELIVERED1', '2026-11-01T00:00:00.000000Z', (w) => {
      w.status = '30';
    });
    await seeOrder(warehouse, spoolDir, 'CANCELLED1', '2026-11-01T00:00:00.000000Z', (w) => {
      w.status = '18';
    });
    await seeOrder(warehouse, spoolDir, 'ONTHEWAY01', '2026-11-01T00:00:00.000000Z');
    await appendRunInputs(
      warehouse,
      'run-1',
      [input(1, 'DELIVERED1'), input(2, 'CANCELLED1'), input(3, 'ONTHEWAY01')],
      spoolDir,
      DEFAULT_CARRIER_ID,
    );

    expect((await workOf(warehouse, 'run-1')).flat().map((item) => item.orderCode)).toEqual(['ONTHEWAY01']);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: false })).toBe(1);
    expect((await workOf(warehouse, 'run-1', true)).flat().map((item) => item.orderCode)).toEqual([
      'DELIVERED1',
      'CANCELLED1',
      'ONTHEWAY01',
    ]);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: true })).toBe(3);
  });

  it("skips orders whose latest callback is terminal, ranking only the run's codes' callbacks", async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const callback = (orderCode: string, status: string, at: string) =>
      `('247express', '${orderCode}-${status}', '${orderCode}', '${status}', TIMESTAMPTZ '${at}', 'api_key', TIMESTAMPTZ '${at}', '{}')`;
    await warehouse.run(
      `INSERT INTO callback_events (carrier, event_id, order_code, status, event_time, auth_method, received_at, body) VALUES
       ${callback('DELIVERED1', '25', '2026-11-01 08:00:00+00')}, ${callback('DELIVERED1', '30', '2026-11-01 10:00:00+00')},
       ${callback('REOPENED01', '30', '2026-11-01 08:00:00+00')}, ${callback('REOPENED01', '25', '2026-11-01 10:00:00+00')}`,
    );
    // A year of other orders' callbacks, which the run's work list has no need to rank.
    await warehouse.run(
      `INSERT INTO callback_events (carrier, event_id, order_code, status, event_time, auth_method, received_at, body)
       SELECT '247express', 'other-' || i, 'OTHER' || lpad(CAST(i // 2 AS VARCHAR), 7, '0'), CASE WHEN i % 2 = 0 THEN '25' ELSE '30' END,
              TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_minutes(i), 'api_key', TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_minutes(i), '{}'
       FROM range(0, ${OTHER_CALLBACKS}) AS t(i)`,
    );
    await appendRunInputs(
      warehouse,
      'run-1',
      [input(1, 'DELIVERED1'), input(2, 'REOPENED01'), input(3, 'NOCALLBACK')],
      spoolDir,
      DEFAULT_CARRIER_ID,
    );

    expect((await workOf(warehouse, 'run-1')).flat().map((item) => item.orderCode)).toEqual([
      'REOPENED01',
      'NOCALLBACK',
    ]);
    const profile = join(dir, 'profile.json');
    await warehouse.run("SET enable_profiling = 'json'");
    await warehouse.run(`SET profiling_output = '${profile}'`);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: false })).toBe(2);
    await warehouse.run("SET enable_profiling = 'no_output'");
    expect(callbackRowsRead(JSON.parse(await readFile(profile, 'utf8')))).toBeLessThan(OTHER_CALLBACKS / 10);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: true })).toBe(3);
  });

  it('looks a terminal order up again after a callback that asks for it: a fee, COD or weight update since its lookup', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const sample = JSON.parse(
      await readFile(new URL('../carriers/ghn-samples/detail-ready-to-pick.json', import.meta.url), 'utf8'),
    ) as { data: Record<string, unknown> };
    const seenAt = '2026-11-01T00:00:00.000000Z';
    const codes = ['GHNFEEAFTER', 'GHNFEEBEFORE', 'GHNSTATUSAFTER', 'GHNCODAFTER'];
    await loadLookupBatch(
      warehouse,
      {
        snapshots: codes.map((code) =>
          loaded(
            {
              orderCode: code,
              body: JSON.stringify({
                detail: { ...sample, data: { ...sample.data, order_code: code, status: 'delivered' } },
                fees: null,
              }),
            },
            seenAt,
          ),
        ),
        results: [],
        carrier: 'ghn',
      },
      spoolDir,
    );
    const webhook = JSON.parse(
      await readFile(new URL('../carriers/ghn-samples/webhook-create.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    const callback = (orderCode: string, type: string, at: string) =>
      `('ghn', '${orderCode}|${type}', '${orderCode}', 'delivered', TIMESTAMPTZ '${at}', 'token', TIMESTAMPTZ '${at}',
        '${JSON.stringify({ ...webhook, OrderCode: orderCode, Type: type, Status: 'delivered', Time: at })}')`;
    await warehouse.run(
      `INSERT INTO callback_events (carrier, event_id, order_code, status, event_time, auth_method, received_at, body) VALUES
       ${callback('GHNFEEAFTER', 'Update_fee', '2026-11-02T00:00:00Z')}, ${callback('GHNFEEBEFORE', 'update_fee', '2026-10-31T00:00:00Z')},
       ${callback('GHNSTATUSAFTER', 'switch_status', '2026-11-02T00:00:00Z')}, ${callback('GHNCODAFTER', 'update_cod', '2026-11-02T00:00:00Z')}`,
    );
    await appendRunInputs(
      warehouse,
      'run-1',
      codes.map((code, i) => input(i + 1, code)),
      spoolDir,
      'ghn',
    );

    expect((await workOf(warehouse, 'run-1')).flat().map((item) => item.orderCode)).toEqual([
      'GHNFEEAFTER',
      'GHNCODAFTER',
    ]);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: false })).toBe(2);
    expect(await countRunWork(warehouse, 'run-1', { refreshTerminal: true })).toBe(4);
  });

  it('skips codes that already have a lookup result in this run, so a resume does only the rest', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    await appendRunInputs(
      warehouse,
      'run-1',
      [input(1, 'CODE00001'), input(2, 'CODE00002'), input(3, 'CODE00003')],
      spoolDir,
      DEFAULT_CARRIER_ID,
    );
    const result = (runId: string, orderCode: string) => ({
      runId,
      orderCode,
      accountAlias: 'shop-a',
      outcome: 'carrier_error' as const,
      errorCode: 'ORDERCODE_NOT_FOUND',
      errorMessage: null,
      attempts: 1,
      origin: null,
      finishedAt: '2026-11-11T00:00:00.000000Z' as CarrierInstant,
    });
    await loadLookupBatch(
      warehouse,
      { snapshots: [], results: [result('run-1', 'CODE00002'), result('run-0', 'CODE00003')] },
      spoolDir,
    );

    expect((await workOf(warehouse, 'run-1')).flat().map((item) => item.orderCode)).toEqual(['CODE00001', 'CODE00003']);
  });

  it('yields chunks of the asked size, and the rest of the list stays put while chunks are loaded', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const codes = Array.from({ length: 25 }, (_, i) => `CODE${String(i).padStart(5, '0')}`);
    await appendRunInputs(
      warehouse,
      'run-1',
      codes.map((code, i) => input(i + 1, code)),
      spoolDir,
      DEFAULT_CARRIER_ID,
    );

    const yielded: string[] = [];
    const sizes: number[] = [];
    const workDir = join(dir, 'work');
    for await (const chunk of streamRunWork(warehouse, 'run-1', { refreshTerminal: false, chunkSize: 10, workDir })) {
      sizes.push(chunk.length);
      yielded.push(...chunk.map((item) => item.orderCode));
      // Loading the chunk makes its orders seen, which would move them in a list computed afresh.
      const seenAt = '2026-11-11T00:00:00.000000Z';
      await loadLookupBatch(
        warehouse,
        {
          snapshots: chunk.map((item) => loaded(snapshotOf(trackingWire(item.orderCode)), seenAt, 'run-1')),
          results: [],
        },
        spoolDir,
      );
    }
    expect(sizes).toEqual([10, 10, 5]);
    expect(yielded).toEqual(codes);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('drops its work list when the consumer stops early', async () => {
    const { warehouse, dir } = await temp.open();
    await appendRunInputs(
      warehouse,
      'run-1',
      [input(1, 'CODE00001'), input(2, 'CODE00002')],
      join(dir, 'spool'),
      DEFAULT_CARRIER_ID,
    );
    const workDir = join(dir, 'work');
    for await (const chunk of streamRunWork(warehouse, 'run-1', { refreshTerminal: false, chunkSize: 1, workDir })) {
      expect(chunk).toHaveLength(1);
      expect(await readdir(workDir)).toHaveLength(1);
      break;
    }
    expect(await readdir(workDir)).toEqual([]);
  });

  it('streams a large run in chunks', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    const total = 50_000;
    for (let start = 0; start < total; start += 10_000) {
      const rows = Array.from({ length: 10_000 }, (_, i) =>
        input(start + i + 1, `CODE${String((start + i) % 40_000).padStart(6, '0')}`),
      );
      await appendRunInputs(warehouse, 'run-1', rows, spoolDir, DEFAULT_CARRIER_ID);
    }
    let count = 0;
    let chunks = 0;
    let previous = '';
    const outOfOrder: string[] = [];
    for await (const chunk of streamRunWork(warehouse, 'run-1', {
      refreshTerminal: false,
      workDir: join(dir, 'work'),
    })) {
      chunks++;
      count += chunk.length;
      for (const item of chunk) {
        if (item.orderCode <= previous) outOfOrder.push(item.orderCode);
        previous = item.orderCode;
      }
    }
    expect(outOfOrder).toEqual([]);
    expect(count).toBe(40_000);
    expect(chunks).toBe(40);
    expect(await runInputCounts(warehouse, 'run-1')).toEqual({ read: 50_000, rejected: 0, duplicate: 10_000 });
  });
});
