import { randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SpoolFile } from '../../warehouse/ndjson-spool.js';
import {
  ANSWER_SPOOL_LINE_END,
  type AnswerSighting,
  answerSpoolLineStart,
} from '../../warehouse/snapshot-spool-format.js';
import { RawSpoolFile } from '../raw-spool.js';

/**
 * Bytes of lines gathered before they go to the files: few writes and compression jobs, and a batch
 * holds no more of its answers in memory (kept until the commit, answers would outlive V8's young
 * generation and cost full collections).
 */
const CHUNK_BYTES = 256 * 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_BYTES_PER_CHAR = 3;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;

/** What a gathered batch left on disk. */
export interface WrittenBatchFiles {
  /** The snapshot lines for the loader (plain NDJSON, in the spool folder); undefined when none. */
  readonly snapshotFile: SpoolFile | undefined;
  /** The batch's raw spool file; undefined when it had no answer. */
  readonly rawSpoolFile: string | undefined;
}

/**
 * Spool lines (answerSpoolLine) built in a buffer from the answers' bytes as they came: the answer's
 * text is never encoded again. A full buffer is handed to `emit`.
 */
class SpoolLineChunks {
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  /** The longest line added, in bytes with its line feed. */
  longestLineBytes = 0;

  constructor(private readonly emit: (chunk: Buffer) => void) {}

  add(sighting: AnswerSighting, body: Buffer): void {
    const start = answerSpoolLineStart(sighting);
    const worstCase = start.length * MAX_UTF8_BYTES_PER_CHAR + body.length + ANSWER_SPOOL_LINE_END.length + 1;
    if (this.used + worstCase > this.buffer.length) {
      this.flush();
      if (worstCase > this.buffer.length) this.buffer = Buffer.allocUnsafe(worstCase);
    }
    const lineStart = this.used;
    this.used += this.buffer.write(start, this.used, 'utf8');
    const bodyStart = this.used;
    this.used += body.copy(this.buffer, this.used);
    // Line breaks in JSON text are whitespace between tokens (inside strings they are escaped).
    if (body.includes(LINE_FEED) || body.includes(CARRIAGE_RETURN)) {
      for (let i = bodyStart; i < this.used; i++)
        if (this.buffer[i] === LINE_FEED || this.buffer[i] === CARRIAGE_RETURN) this.buffer[i] = SPACE;
    }
    this.used += this.buffer.write(ANSWER_SPOOL_LINE_END, this.used, 'utf8');
    this.buffer[this.used++] = LINE_FEED;
    this.longestLineBytes = Math.max(this.longestLineBytes, this.used - lineStart);
  }

  flush(): void {
    if (this.used === 0) return;
    const chunk = this.buffer.subarray(0, this.used);
    this.buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
    this.emit(chunk);
  }
}

/**
 * The files of one batch while it gathers: each snapshot's spool line goes to the loader's file and to
 * the raw spool, each other answer's (a carrier error) to the raw spool only.
 */
export class BatchFiles {
  private readonly snapshotLines = new SpoolLineChunks((chunk) => this.writeSnapshotChunk(chunk));
  private readonly otherLines = new SpoolLineChunks((chunk) => this.raw().append(chunk));
  private snapshotFile: { path: string; handle: Promise<FileHandle> } | undefined;
  private rawSpool: RawSpoolFile | undefined;
  /** The loader file's writes, in order; the first failure is kept for `finish`. */
  private snapshotWrites: Promise<void> = Promise.resolve();

  constructor(
    private readonly spoolDir: string,
    private readonly dataDir: string,
    private readonly runId: string,
  ) {}

  addSnapshot(sighting: AnswerSighting, body: Buffer): void {
    this.snapshotLines.add(sighting, body);
  }

  addOtherAnswer(sighting: AnswerSighting, body: Buffer): void {
    this.otherLines.add(sighting, body);
  }

  /** Writes what is still gathered, closes the loader's file and commits the raw spool file. */
  async finish(): Promise<WrittenBatchFiles> {
    this.snapshotLines.flush();
    this.otherLines.flush();
    await this.snapshotWrites;
    if (this.snapshotFile !== undefined) await (await this.snapshotFile.handle).close();
    const rawSpoolFile = await this.rawSpool?.commit();
    const snapshotFile =
      this.snapshotFile === undefined
        ? undefined
        : { path: this.snapshotFile.path, longestLineBytes: this.snapshotLines.longestLineBytes };
    return { snapshotFile, rawSpoolFile };
  }

  /** Removes the loader's file (the raw spool file stays: it is the run's record). */
  async removeSnapshotFile(): Promise<void> {
    if (this.snapshotFile !== undefined) await rm(this.snapshotFile.path, { force: true });
  }

  private writeSnapshotChunk(chunk: Buffer): void {
    this.raw().append(chunk);
    this.snapshotFile ??= this.openSnapshotFile();
    const file = this.snapshotFile;
    const previous = this.snapshotWrites;
    this.snapshotWrites = (async () => {
      await previous;
      await (await file.handle).write(chunk);
    })();
    // Awaited by finish; until then a failure must not count as unhandled.
    this.snapshotWrites.catch(() => undefined);
  }

  private raw(): RawSpoolFile {
    this.rawSpool ??= new RawSpoolFile(this.dataDir, this.runId);
    return this.rawSpool;
  }

  private openSnapshotFile(): { path: string; handle: Promise<FileHandle> } {
    const path = join(this.spoolDir, `lookup-batch-${process.pid}-${randomUUID()}.ndjson`);
    const handle = mkdir(this.spoolDir, { recursive: true }).then(() => open(path, 'wx'));
    handle.catch(() => undefined);
    return { path, handle };
  }
}
