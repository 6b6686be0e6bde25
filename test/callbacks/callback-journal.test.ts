/** The callback journal on a real directory: group commit, whole lines only, one writer per directory, sealed segments. */
import { appendFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalBusyError, JournalWriter, readJournalLines } from '../../src/callbacks/callback-journal.js';

const dirs: string[] = [];
afterEach(async () => {
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
