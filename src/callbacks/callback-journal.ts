import { randomBytes } from 'node:crypto';
import { type FileHandle, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeFolder } from '../errors/disk-fault.js';
import { ProductError } from '../errors/product-error.js';
import { isProcessAlive } from '../warehouse/process-liveness.js';
import { JournalSpace, type JournalSpaceOptions, type JournalSpaceReport } from './journal-space.js';

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

/** Whether the process that wrote a segment has ended, so nothing appends to it any more (its PID is in the name). */
export function segmentWriterEnded(segment: string): boolean {
  const pid = Number(/-(\d+)-[0-9a-f]{6}\.ndjson$/.exec(segment)?.[1]);
  return Number.isInteger(pid) && pid !== process.pid && !isProcessAlive(pid);
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
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessAlive(pid) ? pid : undefined;
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

export interface JournalWriterOptions extends Partial<JournalSpaceOptions> {
  /** A segment is closed and a new one begun once it holds this many bytes. */
  readonly segmentBytes: number;
}

/** A write that put no byte on disk and gave no reason. */
class NothingWrittenError extends Error {
  constructor(path: string) {
    super(`nothing written to ${path}`);
  }
}

/**
 * Appends callback records to the journal, one NDJSON line each, and resolves an append only once its
 * whole line is on disk (every byte written, then fdatasync'd). Appends that arrive while a write is
 * under way are written together by the next one (group commit): one write and one sync for many
 * callbacks. A write claims its room with zeros before it writes its lines, so a disk that fills
 * stops it while it holds no newline a reader could load past: it is cut back to the segment's last
 * whole line and the next write goes there (when the cut fails, or the lines themselves fail, writing
 * goes on in a new segment), so no fragment ever runs into the next line. One writer per directory (a
 * lock file holds the PID); each writer begins a segment of its own, so a segment a killed receiver
 * cut mid-line is never appended to again. The disk's room is watched by a JournalSpace.
 */
export class JournalWriter {
  private file: FileHandle | undefined;
  private segmentName = '';
  /** Bytes of the open segment up to its last whole line: where the next write goes. */
  private segmentSize = 0;
  private pending: PendingAppend[] = [];
  private writing: Promise<void> | undefined;
  private appended = 0;
  private syncs = 0;

  private constructor(
    readonly dir: string,
    private readonly options: JournalWriterOptions,
    private readonly space: JournalSpace,
  ) {}

  /**
   * Takes the journal directory (JournalBusyError when a live receiver has it, PathNotWritableError
   * when the system refuses it), its reserve of space, and begins a segment.
   */
  static async open(dir: string, options: JournalWriterOptions): Promise<JournalWriter> {
    await makeFolder(dir);
    const holder = await journalHolder(dir);
    if (holder !== undefined) throw new JournalBusyError(dir, holder);
    await writeFile(join(dir, LOCK_FILE), `${process.pid}\n`);
    const space = await JournalSpace.open(dir, {
      reserveBytes: options.reserveBytes ?? 0,
      lowSpaceBytes: options.lowSpaceBytes ?? 0,
      logger: options.logger,
    });
    const writer = new JournalWriter(dir, options, space);
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

  /** The disk's room for the journal: free space, reserve, whether callbacks are refused. */
  spaceReport(): JournalSpaceReport {
    return this.space.report();
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
      let written = false;
      let failure: unknown;
      for (let retry = true; !written && retry; ) {
        try {
          await this.writeWhole(bytes);
          written = true;
        } catch (error) {
          failure = error;
          retry = await this.space.afterFailedWrite(error, batch.length);
        }
      }
      if (!written) {
        for (const p of batch) p.reject(failure);
        continue;
      }
      this.appended += batch.length;
      this.syncs++;
      this.space.afterWrite();
      if (this.segmentSize >= this.options.segmentBytes) await this.beginSegment().catch(() => undefined);
      for (const p of batch) p.resolve();
    }
    this.writing = undefined;
  }

  /**
   * Writes `bytes` after the segment's last whole line and makes them durable. The room is claimed
   * with zeros first: a reader loads every line up to the last newline it sees, so a write that
   * fails must leave no newline behind where the next write goes. When claiming the room fails, the
   * zeros are cut back to that line; when the lines themselves then fail to be written or synced (an
   * I/O error, or a file system that needs new room for every write), a reader may already hold
   * some of them, so the segment is given up rather than written over.
   */
  private async writeWhole(bytes: Buffer): Promise<void> {
    // A segment that could not be cut back, or a new one that could not be begun, is not written to.
    if (this.file === undefined) await this.beginSegment();
    const file = this.file!;
    try {
      await this.writeAt(file, Buffer.alloc(bytes.length));
    } catch (error) {
      await this.cutBack(file);
      throw error;
    }
    try {
      await this.writeAt(file, bytes);
      await file.datasync();
    } catch (error) {
      await this.giveUp(file);
      throw error;
    }
    this.segmentSize += bytes.length;
  }

  /** Writes every byte of `bytes` after the segment's last whole line. */
  private async writeAt(file: FileHandle, bytes: Buffer): Promise<void> {
    for (let done = 0; done < bytes.length; ) {
      const { bytesWritten } = await file.write(bytes, done, bytes.length - done, this.segmentSize + done);
      if (bytesWritten === 0) throw new NothingWrittenError(join(this.dir, this.segmentName));
      done += bytesWritten;
    }
  }

  /** Truncates the segment to its last whole line, durably; when that fails, the segment is given up. */
  private async cutBack(file: FileHandle): Promise<void> {
    try {
      await file.truncate(this.segmentSize);
      await file.datasync();
    } catch {
      await this.giveUp(file);
    }
  }

  /** Writes no more to the segment: the next write begins a new one, and this one is sealed. */
  private async giveUp(file: FileHandle): Promise<void> {
    await file.close().catch(() => undefined);
    if (this.file === file) this.file = undefined;
  }

  private async beginSegment(): Promise<void> {
    await this.file?.close().catch(() => undefined);
    this.file = undefined;
    const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
    const name = `callbacks-${stamp}Z-${process.pid}-${randomBytes(3).toString('hex')}.ndjson`;
    const file = await open(join(this.dir, name), 'wx');
    try {
      // The new name must be durable too, or a crash could lose a whole acknowledged segment.
      const dirHandle = await open(this.dir, 'r');
      try {
        await dirHandle.sync();
      } finally {
        await dirHandle.close();
      }
    } catch (error) {
      await file.close();
      await rm(join(this.dir, name), { force: true });
      throw error;
    }
    this.file = file;
    this.segmentName = name;
    this.segmentSize = 0;
  }

  /** Waits for the appends under way, closes the segment and gives the directory up (its reserve stays for the next receiver). */
  async close(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    await this.space.close();
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
