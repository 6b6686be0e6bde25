/** The callback journal on a real directory: group commit, whole lines only, one writer per directory, sealed segments, a disk that fills. */
import { appendFile, mkdtemp, open, readdir, readFile, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalBusyError, JournalWriter, readJournalLines } from '../../src/callbacks/callback-journal.js';
import { RESERVE_FILE } from '../../src/callbacks/journal-space.js';
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisk } from '../support/small-disk.js';

const dirs: string[] = [];
const unmounts: string[] = [];
afterEach(async () => {
  for (const dir of unmounts.splice(0)) await unmountSmallDisk(dir);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-journal-'));
  dirs.push(dir);
  return dir;
}

describe('JournalWriter', () => {
  it('writes appends that arrive during a write together: 100 appends, 2 durable writes, every line once in order', async () => {
    const dir = await tempDir();
    const writer = await JournalWriter.open(dir, { segmentBytes: 1 << 20 });
    await Promise.all(Array.from({ length: 100 }, (_, i) => writer.append(JSON.stringify({ i }))));
    expect(writer.appendedLines).toBe(100);
    expect(writer.durableWrites).toBe(2);
    const text = await readFile(join(dir, writer.activeSegment), 'utf8');
    expect(
      text
        .split('\n')
        .slice(0, -1)
        .map((line) => (JSON.parse(line) as { i: number }).i),
    ).toEqual(Array.from({ length: 100 }, (_, i) => i));
    await writer.close();
  });

  it('begins a new segment past segmentBytes; only the open one is not sealed', async () => {
    const dir = await tempDir();
    const writer = await JournalWriter.open(dir, { segmentBytes: 50 });
    const first = writer.activeSegment;
    await writer.append(JSON.stringify({ pad: 'x'.repeat(60) }));
    expect(writer.activeSegment).not.toBe(first);
    expect(writer.isSealed(first)).toBe(true);
    expect(writer.isSealed(writer.activeSegment)).toBe(false);
    expect((await readdir(dir)).filter((n) => n.endsWith('.ndjson'))).toHaveLength(2);
    await writer.close();
  });

  it('lets one writer have the directory at a time', async () => {
    const dir = await tempDir();
    const writer = await JournalWriter.open(dir, { segmentBytes: 1 << 20 });
    // The lock names this process; a lock file naming another live process is refused.
    await rm(join(dir, 'receiver.lock'));
    await appendFile(join(dir, 'receiver.lock'), `${process.ppid}\n`);
    await expect(JournalWriter.open(dir, { segmentBytes: 1 << 20 })).rejects.toBeInstanceOf(JournalBusyError);
    await writer.close();
  });
});

describe('readJournalLines', () => {
  it('reads whole lines only: an unfinished last line stays out until it is finished', async () => {
    const dir = await tempDir();
    const path = join(dir, 'segment.ndjson');
    await appendFile(path, '{"a":1}\n{"a":2}\n{"a":');
    const first = await readJournalLines(path, 0, 1 << 20);
    expect(first).toEqual({ lines: ['{"a":1}', '{"a":2}'], endOffset: 16, trailingBytes: 5 });
    expect(await readJournalLines(path, first.endOffset, 1 << 20)).toEqual({
      lines: [],
      endOffset: 16,
      trailingBytes: 5,
    });
    await appendFile(path, '3}\n');
    expect(await readJournalLines(path, first.endOffset, 1 << 20)).toEqual({
      lines: ['{"a":3}'],
      endOffset: 24,
      trailingBytes: 0,
    });
  });

  it('widens its window for a line longer than the window', async () => {
    const dir = await tempDir();
    const path = join(dir, 'segment.ndjson');
    const long = JSON.stringify({ text: 'y'.repeat(5000) });
    await appendFile(path, `${long}\n{"b":1}\n`);
    expect((await readJournalLines(path, 0, 64)).lines).toEqual([long, '{"b":1}']);
  });
});

describe.skipIf(!CAN_MOUNT)('JournalWriter on a disk that fills (a 1 MB tmpfs)', () => {
  async function smallDisk(): Promise<string> {
    const dir = await tempDir();
    await mountSmallDisk(dir, '1m');
    unmounts.push(dir);
    return dir;
  }

  /** Fills the disk with a file of its own, leaving `leftBytes` free. */
  async function fillLeaving(dir: string, leftBytes: number): Promise<string> {
    const { bavail, bsize } = await statfs(dir);
    const filler = join(dir, 'filler');
    await writeFile(filler, Buffer.alloc(bavail * bsize - leftBytes, 1));
    return filler;
  }

  it('cuts a write that put only part of its line on disk back to the last whole line, rejects it, and goes on in the same segment', async () => {
    const dir = await smallDisk();
    const writer = await JournalWriter.open(dir, { segmentBytes: 1 << 20 });
    const segment = writer.activeSegment;
    await writer.append('{"line":1}');
    const filler = await fillLeaving(dir, 8192);
    // 20 kB where 8 kB fit: the first write puts part of the line on disk, the next one meets ENOSPC.
    await expect(writer.append(JSON.stringify({ line: 2, pad: 'x'.repeat(20_000) }))).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(await readFile(join(dir, segment), 'utf8')).toBe('{"line":1}\n');
    expect(writer.spaceReport().state).toBe('full');
    await rm(filler);
    await writer.append('{"line":3}');
    expect(writer.activeSegment).toBe(segment);
    expect(await readFile(join(dir, segment), 'utf8')).toBe('{"line":1}\n{"line":3}\n');
    await writer.close();
  });

  it('shows a reader no line of a write the full disk stopped: only zeros stand past the last whole line before the cut-back', async () => {
    const dir = await smallDisk();
    const writer = await JournalWriter.open(dir, { segmentBytes: 1 << 20 });
    const path = join(dir, writer.activeSegment);
    await writer.append('{"line":0}');
    const filler = await fillLeaving(dir, 8192);
    // What a concurrent ingest would load past the last whole line when the failed write is cut back to it.
    const probe = await open(path, 'r');
    const handlePrototype = Object.getPrototypeOf(probe) as { truncate(length?: number): Promise<void> };
    await probe.close();
    const truncate = handlePrototype.truncate;
    const seenBeforeCutBack: string[][] = [];
    const spy = vi.spyOn(handlePrototype, 'truncate').mockImplementation(async function (this: unknown, length) {
      seenBeforeCutBack.push((await readJournalLines(path, length ?? 0, 1 << 20)).lines);
      return truncate.call(this, length);
    });
    try {
      // The first line is written alone; the 199 that come meanwhile are one write, 20 kB where 8 kB fit.
      const appends = Array.from({ length: 200 }, (_, n) =>
        writer.append(JSON.stringify({ line: n + 1, pad: 'z'.repeat(90) })),
      );
      const outcomes = await Promise.allSettled(appends);
      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        'fulfilled',
        ...Array.from({ length: 199 }, () => 'rejected'),
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(seenBeforeCutBack).toEqual([[]]);
    await rm(filler);
    await writer.append('{"line":201}');
    const lines = await readJournalLines(path, 0, 1 << 20);
    expect(lines.lines.map((text) => (JSON.parse(text) as { line: number }).line)).toEqual([0, 1, 201]);
    await writer.close();
  });

  it('gives its reserve up when the disk fills and acknowledges on; refuses once that is spent too; recovers when room returns', async () => {
    const dir = await smallDisk();
    const writer = await JournalWriter.open(dir, { segmentBytes: 1 << 20, reserveBytes: 64 * 1024, lowSpaceBytes: 0 });
    expect((await stat(join(dir, RESERVE_FILE))).size).toBe(64 * 1024);
    const filler = await fillLeaving(dir, 4096);
    const line = (n: number) => JSON.stringify({ line: n, pad: 'y'.repeat(30_000) });
    await writer.append(line(1));
    expect(writer.spaceReport()).toMatchObject({ state: 'reserve_in_use', reserveBytes: 0 });
    await writer.append(line(2));
    await expect(writer.append(line(3))).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(writer.spaceReport()).toMatchObject({ state: 'full', refused: 1 });
    await rm(filler);
    await writer.append(line(4));
    const lines = (await readFile(join(dir, writer.activeSegment), 'utf8')).split('\n');
    expect(lines.slice(0, -1).map((text) => (JSON.parse(text) as { line: number }).line)).toEqual([1, 2, 4]);
    expect(writer.spaceReport().refused).toBe(1);
    await writer.close();
  });
});
