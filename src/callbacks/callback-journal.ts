import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProductError } from '../errors/product-error.js';

/** Segment files of the journal: `callbacks-<UTC stamp>-<pid>-<random>.ndjson`; their names sort by age. */
const SEGMENT_NAME = /^callbacks-\d{8}T\d{6}Z-\d+-[0-9a-f]{6}\.ndjson$/;
const LOCK_FILE = 'receiver.lock';

/** Another live receiver owns the journal directory. */
export class JournalBusyError extends ProductError {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super('JOURNAL_BUSY', `callback journal ${dir} is in use by another receiver (PID ${pid})`);
  }
}

/** The journal's segments, oldest first. */
export async function listJournalSegments(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names.filter((name) => SEGMENT_NAME.test(name)).sort();
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process that wrote a segment has ended, so nothing appends to it any more (its PID is in the name). */
export function segmentWriterEnded(segment: string): boolean {
  const pid = Number(/-(\d+)-[0-9a-f]{6}\.ndjson$/.exec(segment)?.[1]);
  return Number.isInteger(pid) && pid !== process.pid && !processIsAlive(pid);
}

/** The PID of the live receiver holding the journal, other than this process, or undefined. */
export async function journalHolder(dir: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, LOCK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && processIsAlive(pid) ? pid : undefined;
}

/** Whole lines of a segment from `offset`: up to the last newline (a line being written, or cut off by a crash, stays out). */
export async function readJournalLines(
  path: string,
  offset: number,
  maxBytes: number,
): Promise<{ lines: string[]; endOffset: number; trailingBytes: number }> {
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    let window = Math.min(maxBytes, size - offset);
    for (;;) {
      if (window <= 0) return { lines: [], endOffset: offset, trailingBytes: Math.max(0, size - offset) };
      const buffer = Buffer.allocUnsafe(window);
      const { bytesRead } = await file.read(buffer, 0, window, offset);
      const lastNewline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (lastNewline === -1) {
        // One line longer than the window: widen it, unless the file ends first (an unfinished line).
        if (offset + bytesRead >= size) return { lines: [], endOffset: offset, trailingBytes: size - offset };
        window = Math.min(window * 2, size - offset);
        continue;
      }
      const text = buffer.subarray(0, lastNewline).toString('utf8');
      return {
        lines: text.split('\n'),
        endOffset: offset + lastNewline + 1,
        trailingBytes: size - offset - lastNewline - 1,
      };
    }
  } finally {
    await file.close();
  }
}

interface PendingAppend {
  readonly line: string;
  resolve(): void;
  reject(error: unknown): void;
}

export interface JournalWriterOptions {
  /** A segment is closed and a new one begun once it holds this many bytes. */
  readonly segmentBytes: number;
}

/**
 * Appends callback records to the journal, one NDJSON line each, and resolves an append only once its
 * line is on disk (written and fdatasync'd). Appends that arrive while a write is under way are written
 * together by the next one (group commit): one write and one sync for many callbacks. One writer per
 * directory (a lock file holds the PID); each writer begins a segment of its own, so a segment a killed
 * receiver cut mid-line is never appended to again.
 */
export class JournalWriter {
  private file: FileHandle | undefined;
  private segmentName = '';
  private segmentSize = 0;
  private pending: PendingAppend[] = [];
  private writing: Promise<void> | undefined;
  private appended = 0;
  private syncs = 0;

  private constructor(
    readonly dir: string,
    private readonly options: JournalWriterOptions,
  ) {}

  /** Takes the journal directory (JournalBusyError when a live receiver has it) and begins a segment. */
  static async open(dir: string, options: JournalWriterOptions): Promise<JournalWriter> {
    await mkdir(dir, { recursive: true });
    const holder = await journalHolder(dir);
    if (holder !== undefined) throw new JournalBusyError(dir, holder);
    await writeFile(join(dir, LOCK_FILE), `${process.pid}\n`);
    const writer = new JournalWriter(dir, options);
    await writer.beginSegment();
    return writer;
  }

  /** The segment being written; every other segment is sealed. */
  get activeSegment(): string {
    return this.segmentName;
  }

  /** Whether nothing appends to a segment any more: it is not this writer's open segment, and its writer is this one or has ended. */
  isSealed(segment: string): boolean {
    return segment !== this.segmentName && (segment.includes(`-${process.pid}-`) || segmentWriterEnded(segment));
  }

  /** Writes made durable (one fdatasync each) since the writer opened: fewer than the lines when appends were grouped. */
  get durableWrites(): number {
    return this.syncs;
  }

  /** Lines made durable since the writer opened. */
  get appendedLines(): number {
    return this.appended;
  }

  /** Resolves once `line` (JSON text without a newline) is on disk; rejects when it could not be made so. */
  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ line, resolve, reject });
      this.writing ??= this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const bytes = Buffer.from(`${batch.map((p) => p.line).join('\n')}\n`, 'utf8');
      try {
        await this.file!.write(bytes, 0, bytes.length);
        await this.file!.datasync();
        this.segmentSize += bytes.length;
        this.appended += batch.length;
        this.syncs++;
      } catch (error) {
        for (const p of batch) p.reject(error);
        // The segment may end in part of a line now: go on in a fresh one.
        await this.beginSegment().catch(() => undefined);
        continue;
      }
      if (this.segmentSize >= this.options.segmentBytes) await this.beginSegment().catch(() => undefined);
      for (const p of batch) p.resolve();
    }
    this.writing = undefined;
  }

  private async beginSegment(): Promise<void> {
    await this.file?.close().catch(() => undefined);
    this.file = undefined;
    const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
    const name = `callbacks-${stamp}Z-${process.pid}-${randomBytes(3).toString('hex')}.ndjson`;
    this.file = await open(join(this.dir, name), 'wx');
    // The new name must be durable too, or a crash could lose a whole acknowledged segment.
    const dirHandle = await open(this.dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
    this.segmentName = name;
    this.segmentSize = 0;
  }

  /** Waits for the appends under way, closes the segment and gives the directory up. */
  async close(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    await this.file?.close();
    this.file = undefined;
    this.segmentName = '';
    if ((await journalHolder(this.dir)) === undefined) await rm(join(this.dir, LOCK_FILE), { force: true });
  }
}

/** Bytes of a segment file now. */
export async function segmentSize(dir: string, segment: string): Promise<number> {
  return (await stat(join(dir, segment))).size;
}
