/**
 * The receiver as a real process with its journal on a 1 MB tmpfs: callbacks sent until the disk is
 * full and they are refused (503), then again after the disk is grown. Every acknowledged callback is
 * in the warehouse after `callbacks ingest`, the disk running low and full was reported before the
 * first refusal, and the receiver recovered without a restart. A journal folder on a read-only file
 * system ends the receiver with one line and exit 2.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoadOutcome, runCallbackLoad } from '../../bench/support/callback-load.js';
import { httpGet } from '../sandbox/sandbox-http.js';
import { queryWarehouse, startReceiverProcess } from '../support/callback-receiver-process.js';
import { cli } from '../support/cli-process.js';
import { CAN_MOUNT, mountSmallDisk, resizeSmallDisk, unmountSmallDisk } from '../support/small-disk.js';

const KEY = 'disk-key-hanoi-0001';
const ENV = { PARCEL_RECON_API_KEYS: `hanoi-shop=${KEY}` };
const ROUND = 200;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A workspace with a folder mounted as a tmpfs of `size`: the warehouse beside it, on the ordinary disk. */
async function workspace(
  size: string,
  options: { readOnly?: boolean } = {},
): Promise<{ disk: string; dbPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-journal-disk-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const disk = join(dir, 'disk');
  await mkdir(disk);
  await mountSmallDisk(disk, size, options);
  cleanups.push(() => unmountSmallDisk(disk));
  return { disk, dbPath: join(dir, 'recon.duckdb') };
}

function sendRound(url: string, prefix: string): Promise<LoadOutcome[]> {
  return runCallbackLoad(url, {
    total: ROUND,
    perSecond: 400,
    perHundred: { duplicate: 0, badCredential: 0, malformed: 0 },
    keys: [KEY],
    orderPrefix: prefix,
    connections: 16,
  }).then((report) => report.outcomes);
}

function firstLogIndex(lines: readonly string[], message: string): number {
  return lines.findIndex((line) => (JSON.parse(line) as { msg?: string }).msg?.startsWith(message) === true);
}

describe.skipIf(!CAN_MOUNT)('the callback journal on a disk that fills', () => {
  it('loses no acknowledged callback: refused with 503 once the disk and its reserve are full, acknowledged again once it is grown, without a restart', {
    timeout: 180_000,
  }, async () => {
    const { disk, dbPath } = await workspace('1m');
    const journalDir = join(disk, 'callbacks');
    const receiver = await startReceiverProcess(
      [
        ...['--db', dbPath, '--journal-dir', journalDir, '--ingest-interval-ms', '600000'],
        ...['--journal-reserve-bytes', String(256 * 1024), '--journal-low-space-bytes', String(512 * 1024)],
      ],
      ENV,
    );
    cleanups.push(() => receiver.kill());
    const health = async () => JSON.parse((await httpGet(`${receiver.url}/health`)).text) as Record<string, any>;
    expect((await health()).status).toBe('ok');

    // Until the disk is full: about 1,100 callbacks of some 700 bytes fit in 1 MB.
    const beforeGrowth: LoadOutcome[] = [];
    for (let round = 0; beforeGrowth.every((o) => o.accepted); round++) {
      expect(round, 'rounds sent before the first refusal').toBeLessThan(20);
      beforeGrowth.push(...(await sendRound(receiver.url, `FULL${round}-`)));
    }
    // The flood goes on against the full disk.
    beforeGrowth.push(...(await sendRound(receiver.url, 'FLOOD-')));
    const refused = beforeGrowth.filter((o) => !o.accepted);
    expect(beforeGrowth.filter((o) => o.accepted).length).toBeGreaterThan(500);
    expect(refused.length).toBeGreaterThanOrEqual(ROUND);
    expect(new Set(refused.map((o) => o.status))).toEqual(new Set([503]));
    const whileFull = await health();
    expect(whileFull.status).toBe('degraded');
    expect(whileFull.journal.space).toMatchObject({ state: 'full', reserveBytes: 0, refused: refused.length });

    // Reported before the first refusal: the disk running low, then the reserve given up; the refusal itself in one line.
    const logs = receiver.logLines;
    const low = firstLogIndex(logs, 'callback journal disk is running out of space');
    const reserveGivenUp = firstLogIndex(logs, 'callback journal disk is full');
    const refusing = firstLogIndex(logs, 'callback journal cannot be written');
    expect(low).toBeGreaterThanOrEqual(0);
    expect(reserveGivenUp).toBeGreaterThan(low);
    expect(refusing).toBeGreaterThan(reserveGivenUp);
    expect(logs.filter((line) => line.includes('callback journal cannot be written'))).toHaveLength(1);

    await resizeSmallDisk(disk, '4m');
    const afterGrowth = await sendRound(receiver.url, 'GROWN-');
    expect(afterGrowth.filter((o) => !o.accepted)).toEqual([]);
    await expect
      .poll(() => firstLogIndex(logs, 'callback journal can be written again'), { timeout: 15_000 })
      .toBeGreaterThan(refusing);
    expect(logs.filter((line) => line.includes('callback journal cannot be written'))).toHaveLength(1);
    await expect.poll(async () => (await health()).status, { timeout: 10_000 }).toBe('ok');

    // Killed: nothing loaded on the way out; `callbacks ingest` loads what it journaled.
    await receiver.kill();
    const ingest = await cli(['callbacks', 'ingest', '--db', dbPath, '--journal-dir', journalDir, '--json'], {});
    expect(ingest.code, ingest.stderr).toBe(0);
    expect(JSON.parse(ingest.stdout)).toMatchObject({ unreadableLines: 0, tornTails: 0 });
    const acknowledged = new Set([...beforeGrowth, ...afterGrowth].filter((o) => o.accepted).map((o) => o.eventId!));
    const stored = await queryWarehouse<{ event_id: string }>(dbPath, 'SELECT event_id FROM callback_events');
    expect(new Set(stored.map((row) => row.event_id))).toEqual(acknowledged);
  });

  it('ends with one line and exit 2 when the journal folder is on a read-only file system', async () => {
    const { disk, dbPath } = await workspace('1m', { readOnly: true });
    const journalDir = join(disk, 'callbacks');
    const result = await cli(['callbacks', '--port', '0', '--db', dbPath, '--journal-dir', journalDir], ENV);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`parcel-recon: cannot write ${journalDir}: read-only file system\n`);
  });
});
