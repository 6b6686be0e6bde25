import { randomBytes } from 'node:crypto';
import { open, rm, stat, statfs, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** The file holding the journal's reserve of disk space, in the journal directory. */
export const RESERVE_FILE = 'journal.reserve';

/** How often the free space is measured, and how often a refusal that goes on is logged again. */
const CHECK_INTERVAL_MS = 1_000;
const REMINDER_MS = 60_000;
/**
 * How long writes must go without a refusal for it to be logged as over: on a nearly full disk a
 * small write may fit between refused ones, which is no recovery yet.
 */
const RECOVERED_AFTER_MS = 5_000;
const FILL_CHUNK_BYTES = 64 * 1024;

export interface JournalSpaceOptions {
  /**
   * Bytes held in the reserve file, given up when the disk fills so that callbacks are still
   * acknowledged while the operator makes room; 0: no reserve.
   */
  readonly reserveBytes: number;
  /** Free bytes (the reserve not counted) under which the disk is reported low. */
  readonly lowSpaceBytes: number;
  readonly logger?: Logger | undefined;
}

/** ok; low: free space under the threshold; reserve_in_use: the disk filled and the reserve was given up; full: callbacks are refused. */
export type JournalSpaceState = 'ok' | 'low' | 'reserve_in_use' | 'full';

export interface JournalSpaceReport {
  readonly state: JournalSpaceState;
  /** Free bytes at the last measure (the reserve not counted), or null when the file system does not say. */
  readonly freeBytes: number | null;
  readonly lowSpaceBytes: number;
  /** Bytes the reserve file holds now. */
  readonly reserveBytes: number;
  /** Callbacks refused for want of a durable write since the receiver started. */
  readonly refused: number;
}

/** Whether a failed write means the disk or the user's quota has no room left. */
function isOutOfSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

function causeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/**
 * Watches the room the journal has: a reserve file of `reserveBytes` taken when the journal opens,
 * free space measured every second against `lowSpaceBytes`. A disk running low is a warning; a disk
 * that fills gives the reserve up (a warning) so that writes go on; only when that is spent too are
 * callbacks refused (one error line, repeated once a minute with the count while it lasts, and one
 * line when writes have gone 5 s without a refusal). Every write is attempted: when space returns, it
 * succeeds, and the reserve is taken back once twice its size is free.
 */
export class JournalSpace {
  private reserveHeld = 0;
  private freeBytes: number | null = null;
  private lowReported = false;
  private refused = 0;
  private refusedSinceLog = 0;
  /** When a refusal was last logged; 0 once its end is logged. */
  private lastRefusalLog = 0;
  private lastRefusalAt = 0;
  private lastWriteAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    private readonly options: JournalSpaceOptions,
  ) {}

  /** Takes the reserve (as much of it as fits, with a warning when not all) and measures the free space. */
  static async open(dir: string, options: JournalSpaceOptions): Promise<JournalSpace> {
    const space = new JournalSpace(dir, options);
    space.reserveHeld = await space.fillReserve();
    if (space.reserveHeld < options.reserveBytes)
      options.logger?.warn(
        { dir, reserveBytes: options.reserveBytes, heldBytes: space.reserveHeld },
        'callback journal reserve could not be made whole: the disk is too full',
      );
    await space.check();
    space.timer = setInterval(() => void space.check(), CHECK_INTERVAL_MS);
    space.timer.unref();
    return space;
  }

  private get reservePath(): string {
    return join(this.dir, RESERVE_FILE);
  }

  /**
   * Makes the reserve file hold `reserveBytes` of allocated blocks; returns what it holds. Random
   * bytes, not zeros: a compressing file system would store zeros in nothing.
   */
  private async fillReserve(): Promise<number> {
    const wanted = this.options.reserveBytes;
    let held = (await stat(this.reservePath).catch(() => ({ size: 0 }))).size;
    if (held > wanted) {
      // A reserve made under a larger setting.
      await truncate(this.reservePath, wanted);
      return wanted;
    }
    if (held === wanted) return held;
    const file = await open(this.reservePath, 'a');
    try {
      const chunk = randomBytes(FILL_CHUNK_BYTES);
      while (held < wanted) {
        const { bytesWritten } = await file.write(chunk, 0, Math.min(chunk.length, wanted - held), held);
        held += bytesWritten;
      }
      await file.datasync();
    } catch (error) {
      if (!isOutOfSpace(error)) throw error;
      // What did not fit: the file keeps the blocks it got; the reserve counts as held up to them.
      held = (await file.stat()).size;
    } finally {
      await file.close();
    }
    return held;
  }

  /** Measures the free space, takes the reserve back when there is room, and reports a disk running low. */
  check(): Promise<void> {
    this.checking ??= this.measure().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async measure(): Promise<void> {
    const { logger, reserveBytes, lowSpaceBytes } = this.options;
    if (this.lastRefusalLog > 0 && !this.refusing) {
      logger?.info(
        { dir: this.dir, refusedSinceLastLine: this.refusedSinceLog },
        'callback journal can be written again: callbacks are acknowledged',
      );
      this.lastRefusalLog = 0;
      this.refusedSinceLog = 0;
    }
    let free: number;
    try {
      const fs = await statfs(this.dir);
      free = fs.bavail * fs.bsize;
    } catch {
      this.freeBytes = null;
      return;
    }
    if (this.reserveHeld < reserveBytes && !this.refusing && free >= 2 * reserveBytes) {
      const before = this.reserveHeld;
      this.reserveHeld = await this.fillReserve().catch(() => this.reserveHeld);
      free -= this.reserveHeld - before;
      if (this.reserveHeld >= reserveBytes)
        logger?.info({ dir: this.dir, reserveBytes }, 'callback journal reserve taken back');
    }
    this.freeBytes = free;
    const low = free < lowSpaceBytes;
    if (low && !this.lowReported)
      logger?.warn(
        { dir: this.dir, freeBytes: free, lowSpaceBytes, reserveBytes: this.reserveHeld },
        'callback journal disk is running out of space: make room, or callbacks will be refused once it and the reserve are full',
      );
    else if (!low && this.lowReported)
      logger?.info({ dir: this.dir, freeBytes: free }, 'callback journal disk has room again');
    this.lowReported = low;
  }

  /**
   * After a write that failed (the segment already cut back to its last whole line): true when the
   * reserve was given up for it, so the write may be made again; false when the callbacks it
   * carried are refused.
   */
  async afterFailedWrite(error: unknown, lines: number): Promise<boolean> {
    const { logger } = this.options;
    if (isOutOfSpace(error) && this.reserveHeld > 0) {
      // Measured first: a disk that filled between two measures is reported low before it is reported full.
      await this.check();
      await rm(this.reservePath, { force: true });
      logger?.warn(
        { dir: this.dir, releasedBytes: this.reserveHeld },
        'callback journal disk is full: its reserve is given up to go on acknowledging callbacks; make room now',
      );
      this.reserveHeld = 0;
      return true;
    }
    this.refused += lines;
    this.refusedSinceLog += lines;
    const now = Date.now();
    this.lastRefusalAt = now;
    if (now - this.lastRefusalLog >= REMINDER_MS) {
      logger?.error(
        { dir: this.dir, cause: causeOf(error), refused: this.refusedSinceLog },
        'callback journal cannot be written: callbacks are answered 503 until it can',
      );
      this.lastRefusalLog = now;
      this.refusedSinceLog = 0;
    }
    return false;
  }

  /** After a durable write. */
  afterWrite(): void {
    this.lastWriteAt = Date.now();
  }

  /** Whether callbacks are being refused: one was, and writes have not gone 5 s without a refusal since. */
  private get refusing(): boolean {
    return (
      this.lastRefusalAt > 0 &&
      (this.lastWriteAt < this.lastRefusalAt || Date.now() - this.lastRefusalAt < RECOVERED_AFTER_MS)
    );
  }

  report(): JournalSpaceReport {
    const state: JournalSpaceState = this.refusing
      ? 'full'
      : this.reserveHeld < this.options.reserveBytes
        ? 'reserve_in_use'
        : this.freeBytes !== null && this.freeBytes < this.options.lowSpaceBytes
          ? 'low'
          : 'ok';
    return {
      state,
      freeBytes: this.freeBytes,
      lowSpaceBytes: this.options.lowSpaceBytes,
      reserveBytes: this.reserveHeld,
      refused: this.refused,
    };
  }

  /** Stops measuring; the reserve file stays for the next receiver. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }
}
