import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CarrierInstant } from '../../src/carriers/247express/contract.js';
import { startRun } from '../../src/warehouse/run-store.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { type CliResult, cli } from '../support/cli-process.js';

const KEYS = { 'shop-a': 'key-a-0123456789abcdef' };
const RUNS = 3;

/** The refusal a user meets: one line, no stack, exit 2. */
function expectRefused(result: CliResult, text: string): void {
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(text);
  expect(lines[0]).not.toContain('    at ');
  expect(result.stdout).toBe('');
}

async function runCount(dbPath: string): Promise<number> {
  const warehouse = await Warehouse.open(dbPath, { readOnly: true });
  try {
    return Number((await warehouse.readAll('SELECT count(*) AS n FROM runs')).getRowObjectsJS()[0]!.n);
  } finally {
    await warehouse.close();
  }
}

describe('a read-only open of the warehouse', () => {
  let dir: string;
  let dbPath: string;
  let keysFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-read-only-'));
    dbPath = join(dir, 'recon.duckdb');
    keysFile = join(dir, 'keys.json');
    await writeFile(keysFile, JSON.stringify(KEYS), { mode: 0o600 });
    await writeFile(join(dir, 'orders.csv'), 'order_code,account\nGHN0001,shop-a\n');
    const warehouse = await Warehouse.open(dbPath);
    try {
      for (let i = 0; i < RUNS; i++)
        await startRun(warehouse, {
          runId: `JOB-20261120T150000Z-00000${i}`,
          job: 'track',
          source: 'orders.csv',
          startedAt: '2026-11-20T22:00:00+07:00' as CarrierInstant,
          carrierDay: '2026-11-20',
        });
    } finally {
      await warehouse.close();
    }
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const refusedStatements = (): [string, string][] => [
    ['COPY over the warehouse', `COPY (SELECT 'x') TO '${dbPath}'`],
    ['COPY to another file', `COPY (SELECT 'x') TO '${join(dir, 'out.csv')}'`],
    ['read_text of the keys file', `SELECT * FROM read_text('${keysFile}')`],
    ['read_csv of a file', `SELECT * FROM read_csv('${join(dir, 'orders.csv')}')`],
    ['INSTALL httpfs', 'INSTALL httpfs'],
    ['LOAD httpfs', 'LOAD httpfs'],
    ['SET to unlock', 'SET enable_external_access = true'],
    ['SET to unlock the settings', 'SET lock_configuration = false'],
    ['ATTACH another file', `ATTACH '${join(dir, 'other.duckdb')}' AS other`],
  ];

  it('refuses each statement of sql that reaches outside the warehouse, with one line and exit 2', async () => {
    for (const [what, statement] of refusedStatements()) {
      const result = await cli(['sql', statement, '--db', dbPath], {});
      expectRefused(result, 'query refused');
      expect(result.stderr, what).not.toContain(KEYS['shop-a']);
    }
    await expect(stat(join(dir, 'out.csv'))).rejects.toThrow();
    await expect(stat(join(dir, 'other.duckdb'))).rejects.toThrow();
    expect(await runCount(dbPath)).toBe(RUNS);
    const rows = await cli(['sql', 'SELECT count(*) AS n FROM runs', '--db', dbPath, '--format', 'json'], {});
    expect(rows.code, rows.stderr).toBe(0);
    expect(JSON.parse(rows.stdout)).toEqual([{ n: String(RUNS) }]);
  });

  it("prints each instant in the display time zone with its offset, nested ones too, whatever the machine's zone", async () => {
    const query = `SELECT started_at, [started_at] AS list, {'at': started_at} AS struct,
      TIMESTAMPTZ '2026-11-20 15:00:00.25+00' AS fraction, CAST(started_at AS DATE) AS utc_day
      FROM runs ORDER BY run_id LIMIT 1`;
    const printed = async (env: Record<string, string>, ...flags: string[]) => {
      const result = await cli(['sql', query, '--db', dbPath, '--format', 'json', ...flags], env);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Record<string, unknown>[];
    };
    const machineInNewYork = { TZ: 'America/New_York' };
    expect(await printed(machineInNewYork)).toEqual([
      {
        started_at: '2026-11-20T22:00:00+07:00',
        list: ['2026-11-20T22:00:00+07:00'],
        struct: { at: '2026-11-20T22:00:00+07:00' },
        fraction: '2026-11-20T22:00:00.25+07:00',
        utc_day: '2026-11-20',
      },
    ]);
    const [paris] = await printed(machineInNewYork, '--time-zone', 'Europe/Paris');
    expect(paris!.started_at).toBe('2026-11-20T16:00:00+01:00');
    const [utc] = await printed({ ...machineInNewYork, PARCEL_RECON_TIME_ZONE: 'UTC' });
    expect(utc!.struct).toEqual({ at: '2026-11-20T15:00:00+00:00' });
    const table = await cli(['sql', 'SELECT started_at FROM runs LIMIT 1', '--db', dbPath], machineInNewYork);
    expect(table.stdout.split('\n')[2]).toBe('2026-11-20T22:00:00+07:00');
  });

  it('still lets a report write its Parquet files into its output directory', async () => {
    const out = join(dir, 'reports');
    const result = await cli(
      ['report', 'failures', '--db', dbPath, '--format', 'parquet', '--out', out, '--from', '2026-11-01'],
      { PARCEL_RECON_NOW: '2026-11-21T00:00:00+07:00' },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('.parquet');
    expect(await runCount(dbPath)).toBe(RUNS);
  });
});

describe('a warehouse path naming a file that is not a DuckDB database', () => {
  let dir: string;
  let csvPath: string;
  let server: Server;
  let requests = 0;
  let baseUrl: string;
  const csvText = 'order_code,account\nGHN0001,shop-a\n';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-not-duckdb-'));
    csvPath = join(dir, 'wh.csv');
    await writeFile(csvPath, csvText);
    server = createServer((request, response) => {
      requests += 1;
      request.resume();
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('is refused by track with one line and exit 2, the file unchanged and no lookup sent', async () => {
    const input = join(dir, 'orders.csv');
    await writeFile(input, csvText);
    const result = await cli(['track', '--input', input, '--db', csvPath], {
      PARCEL_RECON_API_KEYS: `shop-a=${KEYS['shop-a']}`,
      PARCEL_RECON_TRACKING_URL: baseUrl,
      PARCEL_RECON_BASE_URL: baseUrl,
    });
    expectRefused(result, `cannot open warehouse ${csvPath}: not a DuckDB database file`);
    expect(requests).toBe(0);
    expect(await readFile(csvPath, 'utf8')).toBe(csvText);
  });

  it('is refused by sql, quota and report alike, whatever its name', async () => {
    const named = join(dir, 'recon.duckdb');
    await writeFile(named, csvText);
    for (const path of [csvPath, named]) {
      for (const args of [
        ['sql', 'SELECT 1', '--db', path],
        ['quota', '--db', path],
        ['report', 'failures', '--db', path, '--out', join(dir, 'reports')],
      ]) {
        expectRefused(await cli(args, {}), `cannot open warehouse ${path}: not a DuckDB database file`);
        expect(await readFile(path, 'utf8')).toBe(csvText);
      }
    }
  });

  it('leaves a new path free to become a warehouse, whatever its name', async () => {
    const fresh = join(dir, 'new', 'fresh.csv');
    await mkdir(join(dir, 'new'));
    const warehouse = await Warehouse.open(fresh);
    await warehouse.close();
    const header = await readFile(fresh);
    expect(header.subarray(8, 12).toString()).toBe('DUCK');
    expect((await cli(['sql', 'SELECT count(*) AS n FROM runs', '--db', fresh, '--format', 'csv'], {})).stdout).toBe(
      'n\n0\n',
    );
  });
});
