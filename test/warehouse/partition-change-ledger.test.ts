import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PriceQuoteRequest } from '../../src/carriers/carrier-price-quotes.js';
import type { CarrierInstant } from '../../src/carriers/carrier-time.js';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { loadCallbackJournalSlice } from '../../src/warehouse/callback-event-loader.js';
import { loadImageLists } from '../../src/warehouse/image-list-loader.js';
import { exportSnapshot } from '../../src/warehouse/parquet-snapshot-export.js';
import { openSnapshot } from '../../src/warehouse/parquet-snapshot-reader.js';
import { PARTITION_CHANGES_TABLE, recordChangedRowsOf } from '../../src/warehouse/partition-change-ledger.js';
import { loadPriceQuotes, type PriceQuoteRow } from '../../src/warehouse/price-quote-loader.js';
import {
  appendRunInputs,
  deferRunWork,
  deleteRunInputs,
  type RunInputRow,
  recordRejectedInputs,
} from '../../src/warehouse/run-input-store.js';
import { pruneRunRows } from '../../src/warehouse/run-retention.js';
import { finishRun, startRun } from '../../src/warehouse/run-store.js';
import { MARK_EVERY_PARTITION_CHANGED } from '../../src/warehouse/schema/v9-snapshot-partition-changes.js';
import { loadLookupBatch } from '../../src/warehouse/snapshot-loader.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { mergeWarehouses } from '../../src/warehouse/warehouse-merge.js';
import { placeFreshWarehouse } from '../support/fresh-warehouse.js';
import { loaded, okLookupResult, snapshotOf, trackingWire, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

const AUGUST = '2026-08-10T03:00:00.000000Z';
const SEPTEMBER = '2026-09-10T03:00:00.000000Z';
const NOVEMBER = '2026-11-10T03:00:00.000000Z';
const TONIGHT = '2026-11-28T19:00:00.000000Z';

/** The ledger's rows of single partitions recorded after this call, as `[relation, partition]`, by a function to call later. */
async function ledgerRowsSince(warehouse: Warehouse): Promise<() => Promise<unknown[][]>> {
  const ledger = () =>
    warehouse
      .readAll(`SELECT relation, "partition" FROM ${PARTITION_CHANGES_TABLE} WHERE "partition" <> '*' ORDER BY ALL`)
      .then((reader) => reader.getRows());
  const before = await ledger();
  return async () => (await ledger()).filter((row) => !before.some((old) => old.join() === row.join()));
}

function inputRow(seq: number, orderCode: string, rejectCode: string | null = null): RunInputRow {
  return {
    seq,
    orderCode,
    accountAlias: 'shop-a',
    origin: `orders.csv:${seq}`,
    rejectCode,
    rejectReason: rejectCode === null ? null : 'not an order code',
  };
}

/** A run that stages `codes`, then loads the snapshots of `seen` (a status each) and their results. */
async function track(
  warehouse: Warehouse,
  dir: string,
  runId: string,
  at: string,
  codes: readonly string[],
  seen: Record<string, string>,
): Promise<void> {
  await startRun(warehouse, {
    runId,
    job: 'track',
    source: 'orders.csv',
    startedAt: at as CarrierInstant,
    carrierDay: at.slice(0, 10),
  });
  const spool = join(dir, 'spool');
  await appendRunInputs(
    warehouse,
    runId,
    codes.map((code, index) => inputRow(index + 1, code)),
    spool,
    DEFAULT_CARRIER_ID,
  );
  await loadLookupBatch(
    warehouse,
    {
      snapshots: Object.entries(seen).map(([code, status]) =>
        loaded(snapshotOf({ ...trackingWire(code), status }), at, runId),
      ),
      results: Object.keys(seen).map((code) => okLookupResult(code, at, runId)),
    },
    spool,
  );
  const counts = {
    codesRead: codes.length,
    codesRejected: 0,
    codesDuplicate: 0,
    codesToLookUp: codes.length,
    lookedUpOk: Object.keys(seen).length,
    carrierErrors: 0,
    transportErrors: 0,
    deferred: 0,
    lookupsSpent: Object.keys(seen).length,
  };
  await finishRun(warehouse, runId, {
    finishedAt: at as CarrierInstant,
    counts,
    exitCode: 0,
    exitState: 'ok',
    summary: {},
  });
}

function callback(eventId: string, orderCode: string, status: string, receivedAt: string): string {
  return JSON.stringify({
    eventId,
    orderCode,
    status,
    statusName: 'CHOXULY',
    eventTime: receivedAt,
    transactionId: eventId,
    deliveryDate: null,
    receiverName: null,
    mailman: null,
    deliveryNotes: null,
    delayCode: status === '16' ? '09' : null,
    delayNotes: null,
    requestFeedbackCount: null,
    description: null,
    externalCode: null,
    referenceCode: null,
    accountAlias: 'shop-a',
    authMethod: 'apikey',
    receivedAt,
    body: {},
  });
}

async function ingestCallbacks(warehouse: Warehouse, dir: string, segment: string, lines: string[]): Promise<void> {
  await loadCallbackJournalSlice(
    warehouse,
    { segment, endOffset: 1_000, lines, lineCount: lines.length },
    join(dir, 'spool'),
    DEFAULT_CARRIER_ID,
  );
}

const REQUEST: PriceQuoteRequest = {
  toProvinceName: 'Hà Nội',
  toDistrictName: 'Ba Đình',
  toWardName: 'Kim Mã',
  length: 10,
  width: 10,
  height: 10,
  realWeight: 1,
  clientHubId: 'hub-1',
  serviceTypeId: 'DE',
};

/** A quote the carrier refused: a row without lines. */
function refusedQuote(quoteId: string, orderCode: string, runId: string, quotedAt: string): PriceQuoteRow {
  return {
    quoteId,
    runId,
    orderCode,
    accountAlias: 'shop-a',
    request: REQUEST,
    result: null,
    errorCode: 'QUOTE_CARRIER_ERROR',
    errorMessage: 'no route',
    quotedAt: quotedAt as CarrierInstant,
  };
}

async function loadImages(warehouse: Warehouse, dir: string, orderCode: string, runId: string, at: string) {
  await loadImageLists(
    warehouse,
    {
      lists: [
        {
          orderCode,
          accountAlias: 'shop-a',
          runId,
          fetchedAt: at as CarrierInstant,
          images: [
            { no: 1, imageUrl: `https://img.example/${orderCode}.jpg`, downloadedPath: null, downloadError: null },
          ],
        },
      ],
      results: [okLookupResult(orderCode, at, runId)],
    },
    join(dir, 'spool'),
    DEFAULT_CARRIER_ID,
  );
}

/** Every table of the snapshot `dir`, its rows in order, as JSON values. */
async function snapshotRows(dir: string): Promise<Record<string, unknown[]>> {
  const snapshot = await openSnapshot(dir);
  try {
    const tables = (
      await snapshot.readAll("SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'")
    )
      .getRowObjectsJS()
      .map((row) => String(row.view_name));
    const rows: Record<string, unknown[]> = {};
    for (const table of tables.sort())
      rows[table] = (await snapshot.readAll(`SELECT * FROM "${table}" ORDER BY ALL`)).getRowObjectsJson();
    return rows;
  } finally {
    await snapshot.close();
  }
}

describe('the ledger of changed partitions', () => {
  it("gives an export after every writer's night the rows a full export gives, rewriting only what they touched", async () => {
    const { warehouse, dir } = await temp.open();
    // History: August's orders and their callbacks, quote and images; November's orders.
    await track(warehouse, dir, 'run-aug', AUGUST, ['EX100000001', 'EX100000002', 'EX100000003', 'EX100000004'], {
      EX100000001: '25',
      EX100000002: '25',
      EX100000003: '25',
      EX100000004: '25',
    });
    await track(warehouse, dir, 'run-nov', NOVEMBER, ['EX100000011', 'EX100000012'], {
      EX100000011: '25',
      EX100000012: '25',
    });
    await track(warehouse, dir, 'run-sep', SEPTEMBER, ['EX100000041'], { EX100000041: '25' });
    // A plan's staged codes, which it forgets.
    await track(warehouse, dir, 'run-plan', NOVEMBER, ['EX100000013'], {});
    await ingestCallbacks(warehouse, dir, 'callbacks-1.ndjson', [callback('ev-1', 'EX100000001', '4', AUGUST)]);
    await loadPriceQuotes(
      warehouse,
      [refusedQuote('q-1', 'EX100000001', 'run-aug', AUGUST)],
      join(dir, 'spool'),
      DEFAULT_CARRIER_ID,
    );
    await loadImages(warehouse, dir, 'EX100000001', 'run-aug', AUGUST);

    const lake = join(dir, 'lake');
    await exportSnapshot(warehouse, lake, new Date(NOVEMBER));

    // The night: every writer, on tonight's partitions and on August's.
    await track(warehouse, dir, 'run-night', TONIGHT, ['EX100000002', 'EX100000021', 'EX100000022'], {
      EX100000002: '5',
      EX100000021: '25',
    });
    await appendRunInputs(
      warehouse,
      'run-night',
      [inputRow(4, 'EX1BAD', 'CODE_INVALID')],
      join(dir, 'spool'),
      DEFAULT_CARRIER_ID,
    );
    await recordRejectedInputs(warehouse, 'run-night', TONIGHT as CarrierInstant);
    await deferRunWork(warehouse, 'run-night', {
      refreshTerminal: false,
      finishedAt: TONIGHT as CarrierInstant,
      errorCode: 'RUN_STOPPED',
      errorMessage: 'stopped',
    });
    await appendRunInputs(warehouse, 'run-night', [inputRow(5, 'EX100000023')], join(dir, 'spool'), DEFAULT_CARRIER_ID);
    await deleteRunInputs(warehouse, 'run-plan');
    await ingestCallbacks(warehouse, dir, 'callbacks-2.ndjson', [callback('ev-2', 'EX100000003', '16', TONIGHT)]);
    await loadPriceQuotes(
      warehouse,
      [
        refusedQuote('q-1', 'EX100000001', 'run-night', AUGUST),
        refusedQuote('q-2', 'EX100000011', 'run-night', TONIGHT),
      ],
      join(dir, 'spool'),
      DEFAULT_CARRIER_ID,
    );
    await loadImages(warehouse, dir, 'EX100000002', 'run-night', TONIGHT);
    // A shard's warehouse: August's and September's orders seen again (September's by no other writer), and an order of its own.
    const shard = join(dir, 'shard', 'shard.duckdb');
    await placeFreshWarehouse(shard);
    const shardWarehouse = await Warehouse.open(shard);
    try {
      await track(shardWarehouse, dir, 'run-shard', TONIGHT, ['EX100000004', 'EX100000031', 'EX100000041'], {
        EX100000004: '5',
        EX100000031: '25',
        EX100000041: '5',
      });
    } finally {
      await shardWarehouse.close();
    }
    await mergeWarehouses(warehouse, [shard]);
    await pruneRunRows(
      warehouse,
      { startedBefore: '2026-09-01T00:00:00Z' as CarrierInstant, quotaFrom: '2026-09-01' },
      false,
    );

    const night = await exportSnapshot(warehouse, lake, new Date(TONIGHT));
    const full = join(dir, 'full');
    await exportSnapshot(warehouse, full, new Date(TONIGHT));

    expect(night.partitionsKept).toBeGreaterThan(0);
    expect(night.partitionsWritten).toBeGreaterThan(0);
    expect(await snapshotRows(lake)).toEqual(await snapshotRows(full));
  });

  it('records every partition a batch of the tracking load writes, of new orders and of stored ones', async () => {
    const { warehouse, dir } = await temp.open();
    const lake = join(dir, 'lake');
    await track(warehouse, dir, 'run-aug', AUGUST, ['EX100000001'], { EX100000001: '25' });
    await exportSnapshot(warehouse, lake, new Date(NOVEMBER));
    // Each night's batch alone: a failed attempt in a month of its own (a partition of delivery_failures
    // and of order_statuses no other row is in) and its lookups, after which an export that rewrites
    // what the ledger names has every row a full export has.
    const night = async (runId: string, at: string, failedAt: string, codes: readonly string[]) => {
      const failed = (code: string) => {
        const wire = trackingWire(code);
        const statuses = wire.statuses ?? [];
        const attempt = { ...statuses.at(-1)!, time: failedAt, status: '16', statusName: 'CHOXULY' };
        return snapshotOf({ ...wire, status: '16', statusName: 'CHOXULY', statuses: [...statuses, attempt] });
      };
      await loadLookupBatch(
        warehouse,
        {
          snapshots: codes.map((code) => loaded(failed(code), at, runId)),
          results: codes.map((code) => okLookupResult(code, at, runId)),
        },
        join(dir, 'spool'),
      );
      const written = await exportSnapshot(warehouse, lake, new Date(at));
      const full = join(dir, `full-${runId}`);
      await exportSnapshot(warehouse, full, new Date(at));
      expect(written.partitionsWritten).toBeGreaterThan(0);
      expect(await snapshotRows(lake)).toEqual(await snapshotRows(full));
    };
    await night('run-new', NOVEMBER, '2026-10-20T10:00:00+07:00', ['EX100000021', 'EX100000022']);
    await night('run-again', TONIGHT, '2026-09-20T10:00:00+07:00', ['EX100000001', 'EX100000023']);
    // The rows each part of the ledger's record is there for.
    const written = await warehouse.readAll(
      `SELECT (SELECT list_sort(list(DISTINCT strftime(attempted_at, '%Y-%m'))) FROM delivery_failures) AS failures,
              (SELECT count(*) FROM order_changes WHERE order_code = 'EX100000001') AS changes`,
    );
    expect(written.getRowObjectsJson()).toEqual([{ failures: ['2026-09', '2026-10'], changes: '1' }]);
  });

  it('leaves unread the partitions no write recorded, and reads them all again after a schema step', async () => {
    const { warehouse, dir } = await temp.open();
    await track(warehouse, dir, 'run-aug', AUGUST, ['EX100000001'], { EX100000001: '25' });
    const lake = join(dir, 'lake');
    const first = await exportSnapshot(warehouse, lake, new Date(NOVEMBER));
    const augustOf = (manifest: typeof first.manifest) =>
      manifest.relations
        .find((relation) => relation.name === 'orders')!
        .partitions.find((partition) => partition.key === `carrier=${DEFAULT_CARRIER_ID}/month=2026-08`);
    // A change no writer made, so no ledger row: an export that reads only the partitions the ledger names keeps the file.
    await warehouse.run("UPDATE orders SET receiver_name = 'changed outside' WHERE order_code = 'EX100000001'");
    const unread = await exportSnapshot(warehouse, lake, new Date(TONIGHT));
    expect(augustOf(unread.manifest)).toEqual(augustOf(first.manifest));
    expect(unread.partitionsWritten).toBe(0);

    await warehouse.run(MARK_EVERY_PARTITION_CHANGED);
    const reread = await exportSnapshot(warehouse, lake, new Date(TONIGHT));
    expect(augustOf(reread.manifest)?.fingerprint).not.toBe(augustOf(first.manifest)?.fingerprint);
  });

  it("records several tables' partitions in one statement, each table once", async () => {
    const { warehouse } = await temp.open();
    const recorded = await ledgerRowsSince(warehouse);
    const rows = `SELECT '247express' AS carrier, TIMESTAMPTZ '2026-08-31 20:00:00+00' AS seen_at,
                         TIMESTAMPTZ '2026-09-01 01:00:00+07' AS attempted_at`;
    await warehouse.transaction((sql) =>
      recordChangedRowsOf(sql, [
        { table: 'order_changes', rows },
        { table: 'delivery_failures', rows },
      ]),
    );
    // Both instants are in September, carrier time (UTC+07:00).
    expect(await recorded()).toEqual([
      ['delivery_failures', 'carrier=247express/month=2026-09'],
      ['order_changes', 'carrier=247express/month=2026-09'],
    ]);
    await expect(
      warehouse.transaction((sql) =>
        recordChangedRowsOf(sql, [
          { table: 'order_changes', rows },
          { table: 'order_changes', rows },
        ]),
      ),
    ).rejects.toThrow('each table is named once');
  });

  it("records the children's partitions as their orders', and refuses a table that is not a child", async () => {
    const { warehouse } = await temp.open();
    const recorded = await ledgerRowsSince(warehouse);
    // No order row exists: the children's partitions come from these rows, not from a join with orders.
    const orders = `SELECT '247express' AS carrier, 'EX1' AS order_code, TIMESTAMPTZ '2026-09-30 18:00:00+00' AS first_seen_at`;
    await warehouse.transaction((sql) =>
      recordChangedRowsOf(sql, [{ table: 'orders', rows: orders, children: ['order_charges', 'order_charge_audit'] }]),
    );
    expect(await recorded()).toEqual([
      ['order_charge_audit', 'carrier=247express/month=2026-10'],
      ['order_charges', 'carrier=247express/month=2026-10'],
      ['orders', 'carrier=247express/month=2026-10'],
    ]);
    await expect(
      warehouse.transaction((sql) =>
        recordChangedRowsOf(sql, [{ table: 'orders', rows: orders, children: ['order_statuses'] }]),
      ),
    ).rejects.toThrow('the rows of order_statuses are not placed by those of orders');
    await expect(
      warehouse.transaction((sql) =>
        recordChangedRowsOf(sql, [
          { table: 'orders', rows: orders, children: ['order_charges'] },
          { table: 'order_charges', rows: orders },
        ]),
      ),
    ).rejects.toThrow('each table is named once');
  });
});
