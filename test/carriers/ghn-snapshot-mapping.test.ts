/**
 * GHN's detail answers, as the answer log keeps them, read by DuckDB into the columns the warehouse
 * keeps of an order: GHN's published samples (test/carriers/ghn-samples/) through both of the loader's
 * readers.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPRESS_SNAPSHOT_MAPPING } from '../../src/carriers/247express/snapshot-mapping.js';
import { GHN_SNAPSHOT_MAPPING } from '../../src/carriers/ghn/snapshot-mapping.js';
import type { SpoolReader } from '../../src/warehouse/ndjson-spool.js';
import { readSnapshotSpool } from '../../src/warehouse/snapshot-spool-format.js';

const sample = async (name: string) =>
  JSON.parse(await readFile(new URL(`./ghn-samples/${name}`, import.meta.url), 'utf8')) as {
    data: Record<string, unknown> | Record<string, unknown>[];
  };

/** The names a select list gives its columns, in order. */
const columnNames = (selectList: string) => [...selectList.matchAll(/ AS (\w+)(?:,|$)/gm)].map((m) => m[1]);

describe("GHN's detail and fees as the warehouse reads them", () => {
  let dir: string;
  let file: string;
  let longestLineBytes = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-ghn-mapping-'));
    file = join(dir, 'answers.ndjson');
    const fresh = await sample('detail-ready-to-pick.json');
    const documented = await sample('detail-by-client-code-returning.json');
    // The lookup by GHN's code answers the order itself, where the documented sample lists it.
    const returning = { ...documented, data: (documented.data as Record<string, unknown>[])[0] };
    // As a lookup keeps them (tracked-answer.ts): a fresh order's fees are not asked; the returning
    // one's are GHN's published fee sample, of an order returned.
    const answers = [
      { detail: fresh, fees: null },
      { detail: returning, fees: await sample('fees-returned.json') },
    ];
    const lines = answers.map((answer, i) =>
      JSON.stringify({ runId: 'run-1', accountAlias: 'shop-1', seenAt: `2024-08-0${6 + i}T01:00:00.000000Z`, answer }),
    );
    longestLineBytes = Math.max(...lines.map((line) => Buffer.byteLength(line)));
    await writeFile(file, `${lines.join('\n')}\n`);
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function staged(reader: SpoolReader): Promise<Record<string, unknown>[]> {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    try {
      const rows = readSnapshotSpool(`'${file}'`, { path: file, longestLineBytes }, GHN_SNAPSHOT_MAPPING, reader);
      const reading = await connection.runAndReadAll(
        `SELECT ${GHN_SNAPSHOT_MAPPING.stagedColumns} FROM ${rows} AS s ORDER BY order_code`,
      );
      return reading.getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  }

  it("gives the columns 247Express's mapping gives, in their order", () => {
    const express = columnNames(EXPRESS_SNAPSHOT_MAPPING.stagedColumns);
    expect(express).toContain('cod_amount');
    expect(columnNames(GHN_SNAPSHOT_MAPPING.stagedColumns)).toEqual(express);
  });

  it.each(['json', 'lines'] as const)('reads the published samples with the %s reader', async (reader) => {
    const [fresh, returning] = await staged(reader);
    expect(fresh).toMatchObject({
      order_code: 'L6A8Q9',
      account_alias: 'shop-1',
      external_code: null,
      status: 'ready_to_pick',
      status_name: 'ready_to_pick',
      tracking_name: 'Mới tạo đơn hàng',
      real_weight: 40,
      cal_weight: 0.2,
      weight: 40,
      cod_amount: '50000.0000',
      price: null,
      total_service_cost: null,
      price_info: [],
      delivery_date: null,
      last_run_id: 'run-1',
      statuses: [],
    });
    expect(String(fresh!.accept_date)).toMatch(/^2024-08-05 06:57:47\.686/);
    expect(returning).toMatchObject({
      order_code: 'Z82T1',
      external_code: 'Tin1234567',
      status: 'return',
      trackings: [],
      // The fees' parts, each a line, add to what the two payments add to.
      price: '29700.0000',
      price_fr: '22000.0000',
      total_service_cost: '62700.0000',
      price_info: [
        { serviceID: 'main_service', serviceName: 'main_service', cost: '29700' },
        { serviceID: 'insurance', serviceName: 'insurance', cost: '11000' },
        { serviceID: 'return', serviceName: 'return', cost: '22000' },
      ],
    });
    const statuses = returning!.statuses as { status: string; time: string }[];
    expect(statuses.map((entry) => entry.status)).toEqual([
      'picking',
      'picked',
      'delivering',
      'delivery_fail',
      'waiting_to_return',
      'return',
    ]);
    expect(String(statuses[4]!.time)).toMatch(/^2021-11-11 03:07:53\.64/);
  });
});
