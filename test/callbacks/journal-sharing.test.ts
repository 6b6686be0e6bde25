/**
 * How the receiver and other processes share the warehouse: the receiver keeps acknowledging while
 * another process holds the warehouse, and keeps the journal for later when it is stopped then;
 * `callbacks ingest` loads what the journal holds, once, while the receiver runs or after it died.
 */
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { httpGet, httpPost } from '../sandbox/sandbox-http.js';
import {
  CLI,
  queryWarehouse,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/callback-receiver-process.js';

const run = promisify(execFile);
const KEY = 'sharing-key-0001';
const ENV = { PARCEL_RECON_API_KEYS: `hanoi-shop=${KEY}` };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(ingestIntervalMs: number): Promise<{
  dir: string;
  dbPath: string;
  journalDir: string;
  receiver: ReceiverProcess;
  send(n: number, from: number): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-journal-sharing-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'recon.duckdb');
  const receiver = await startReceiverProcess(['--db', dbPath, '--ingest-interval-ms', String(ingestIntervalMs)], ENV);
  cleanups.push(() => receiver.stop());
  // Its first load (of nothing) creates the warehouse.
  await expect
    .poll(async () => JSON.parse((await httpGet(`${receiver.url}/health`)).text).warehouse.lastIngest, {
      timeout: 20_000,
    })
    .not.toBeNull();
  return {
    dir,
    dbPath,
    journalDir: join(dir, 'callbacks'),
    receiver,
    async send(n, from) {
      for (let i = from; i < from + n; i++) {
        const body = {
          Time: `2026-11-21T0${i % 10}:00:00.1234567+07:00`,
          TransactionId: `SH-${i}`,
          Status: '25',
          StatusName: 'DANGDIPHAT',
          OrderCode: `EX7000000${String(i).padStart(2, '0')}`,
          ApiKey: KEY,
        };
        const answer = await httpPost(`${receiver.url}/IntergrationAPI`, JSON.stringify(body));
        expect(answer.status).toBe(200);
      }
    },
  };
}

interface IngestSummary {
  newEvents: number;
  lines: number;
  tornTails: number;
  segmentsRemoved: number;
}

async function ingest(dbPath: string): Promise<IngestSummary> {
  const { stdout } = await run(process.execPath, [CLI, 'callbacks', 'ingest', '--db', dbPath, '--json'], {
    env: { PATH: process.env.PATH ?? '' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as IngestSummary;
}

async function segments(journalDir: string): Promise<string[]> {
  return (await readdir(journalDir)).filter((name) => name.endsWith('.ndjson'));
}

async function storedCount(dbPath: string): Promise<number> {
  return (await queryWarehouse<{ n: number }>(dbPath, 'SELECT count(*)::INT AS n FROM callback_events'))[0]!.n;
}

describe('sharing the warehouse', () => {
  it('acknowledges while another process holds the warehouse, keeps the journal when stopped then (exit 3), and ingest loads it later', async () => {
    const { dbPath, receiver, send, journalDir } = await setUp(200);
    // The receiver has created the warehouse (setUp waits for its first load); hold it as the nightly run would.
    const holder = await Warehouse.open(dbPath);
    try {
      await send(5, 0);
      await expect
        .poll(async () => JSON.parse((await httpGet(`${receiver.url}/health`)).text).warehouse.busySince, {
          timeout: 20_000,
        })
        .not.toBeNull();
      const health = JSON.parse((await httpGet(`${receiver.url}/health`)).text) as {
        acknowledged: number;
        journal: { backlogBytes: number };
      };
      expect(health.acknowledged).toBe(5);
      expect(health.journal.backlogBytes).toBeGreaterThan(0);
      expect(await receiver.stop()).toBe(3);
      expect(receiver.logLines.some((line) => line.includes('the journal stays'))).toBe(true);
    } finally {
      await holder.close();
    }
    expect(await segments(journalDir)).toHaveLength(1);
    expect(await ingest(dbPath)).toEqual({
      newEvents: 5,
      lines: 5,
      unreadableLines: 0,
      tornTails: 0,
      segmentsRemoved: 1,
    });
    expect(await segments(journalDir)).toEqual([]);
    expect(await storedCount(dbPath)).toBe(5);
  });

  it('ingests from another process while the receiver runs, each line once, and keeps the live segment', async () => {
    const { dbPath, receiver, send, journalDir } = await setUp(600_000);
    await send(4, 0);
    expect(await ingest(dbPath)).toMatchObject({ newEvents: 4, lines: 4, segmentsRemoved: 0 });
    await send(3, 4);
    await send(2, 0); // the carrier's retries of events already stored
    expect(await ingest(dbPath)).toMatchObject({ newEvents: 3, lines: 5, segmentsRemoved: 0 });
    expect(await ingest(dbPath)).toMatchObject({ newEvents: 0, lines: 0 });
    expect(await segments(journalDir)).toHaveLength(1);
    expect(await storedCount(dbPath)).toBe(7);
    // Stopped, the receiver loads nothing twice and deletes its loaded segment.
    expect(await receiver.stop()).toBe(0);
    expect(await segments(journalDir)).toEqual([]);
    expect(await storedCount(dbPath)).toBe(7);
  });

  it('refuses a second receiver on the same journal with exit 4', async () => {
    const { dbPath } = await setUp(600_000);
    await expect(startReceiverProcess(['--db', dbPath], ENV)).rejects.toThrow(
      /exited with code 4[\s\S]*in use by another receiver/,
    );
  });

  it('loads, after a SIGKILL, what the dead receiver journaled, skips and counts the line it was killed writing, and deletes its segment', async () => {
    const { dbPath, receiver, send, journalDir } = await setUp(600_000);
    await send(6, 0);
    await receiver.kill();
    const [segment] = await segments(journalDir);
    await appendFile(join(journalDir, segment!), '{"eventId":"cut-off-mid-');
    expect(await ingest(dbPath)).toMatchObject({ newEvents: 6, lines: 6, tornTails: 1, segmentsRemoved: 1 });
    expect(await segments(journalDir)).toEqual([]);
    expect(await storedCount(dbPath)).toBe(6);
  });
});
