import { randomUUID } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RawSpoolFile } from './raw-spool.js';

/**
 * Bytes of lines gathered before they go to the files: few writes and compression jobs, while a batch
 * holds at most this much of its answers in memory (they are written as they come, not kept until the
 * commit: kept, every answer outlived V8's young generation and its collections).
 */
const CHUNK_BYTES = 256 * 1024;

/** What a gathered batch left on disk. */
export interface WrittenBatchFiles {
  /** The snapshot lines for the loader (plain NDJSON, in the spool folder); undefined when none. */
  readonly snapshotFile: string | undefined;
  /** The batch's raw spool file; undefined when it had no answer. */
  readonly rawSpoolFile: string | undefined;
}

/**
 * The files of one batch while it gathers: each snapshot's spool line goes to the loader's file and to
 * the raw spool, each other answer's (a carrier error) to the raw spool only.
 */
export class BatchFiles {
  private snapshotLines = '';
  private otherLines = '';
  private snapshotFile: { path: string; handle: Promise<FileHandle> } | undefined;
  private rawSpool: RawSpoolFile | undefined;
  /** The loader file's writes, in order; the first failure is kept for `finish`. */
  private snapshotWrites: Promise<void> = Promise.resolve();

  constructor(
    private readonly spoolDir: string,
    private readonly dataDir: string,
    private readonly runId: string,
  ) {}

  addSnapshot(line: string): void {
    this.snapshotLines += `${line}\n`;
    if (this.snapshotLines.length * 2 >= CHUNK_BYTES) this.writeSnapshotLines();
  }

  addOtherAnswer(line: string): void {
    this.otherLines += `${line}\n`;
    if (this.otherLines.length * 2 >= CHUNK_BYTES) this.writeOtherLines();
  }

  /** Writes what is still gathered, closes the loader's file and commits the raw spool file. */
  async finish(): Promise<WrittenBatchFiles> {
    this.writeSnapshotLines();
    this.writeOtherLines();
    await this.snapshotWrites;
    if (this.snapshotFile !== undefined) await (await this.snapshotFile.handle).close();
    const rawSpoolFile = await this.rawSpool?.commit();
    return { snapshotFile: this.snapshotFile?.path, rawSpoolFile };
  }

  /** Removes the loader's file (the raw spool file stays: it is the run's record). */
  async removeSnapshotFile(): Promise<void> {
    if (this.snapshotFile !== undefined) await rm(this.snapshotFile.path, { force: true });
  }

  private writeSnapshotLines(): void {
    if (this.snapshotLines === '') return;
    const chunk = Buffer.from(this.snapshotLines, 'utf8');
    this.snapshotLines = '';
    this.raw().append(chunk);
    const file = (this.snapshotFile ??= this.openSnapshotFile());
    const previous = this.snapshotWrites;
    this.snapshotWrites = (async () => {
      await previous;
      await (await file.handle).write(chunk);
    })();
    // Awaited by finish; until then a failure must not count as unhandled.
    this.snapshotWrites.catch(() => undefined);
  }

  private writeOtherLines(): void {
    if (this.otherLines === '') return;
    this.raw().append(Buffer.from(this.otherLines, 'utf8'));
    this.otherLines = '';
  }

  private raw(): RawSpoolFile {
    return (this.rawSpool ??= new RawSpoolFile(this.dataDir, this.runId));
  }

  private openSnapshotFile(): { path: string; handle: Promise<FileHandle> } {
    const path = join(this.spoolDir, `lookup-batch-${process.pid}-${randomUUID()}.ndjson`);
    const handle = mkdir(this.spoolDir, { recursive: true }).then(() => open(path, 'wx'));
    handle.catch(() => undefined);
    return { path, handle };
  }
}
