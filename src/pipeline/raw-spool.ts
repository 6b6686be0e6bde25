import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { CarrierInstant } from '../carrier/contract.js';
import { dataFolder } from '../warehouse/data-folder.js';
import { type AnswerSighting, answerTextOfSpoolLine } from '../warehouse/snapshot-spool-format.js';

/**
 * The raw spool: every tracking answer body a run received, as it came, so the normalized tables can
 * be rebuilt without a lookup (`parcel-recon replay`). One gzip-compressed NDJSON file per committed
 * batch under `DATA_DIR/raw/RUN_ID/`. A line is an answerSpoolLine: the run, the order code, the key's
 * alias, when it was seen, and the body itself as `answer` (never the key: the carrier's answer does
 * not carry it).
 */
export interface RawResponse {
  readonly orderCode: string;
  readonly accountAlias: string;
  readonly seenAt: CarrierInstant;
  /** The answer's JSON text exactly as the carrier sent it. */
  readonly body: string;
}

/** Fast compression: the spool is written on the lookups' path and read back only by replay. */
const RAW_SPOOL_GZIP_LEVEL = 1;
/** zlib's output buffer: at its default (16 KB) each 256 KB of lines took several thread-pool jobs and callbacks. */
const RAW_SPOOL_GZIP_CHUNK_BYTES = 256 * 1024;

const SPOOL_FILE = /^(\d{13})-\d+-\d+\.ndjson\.gz$/;
let filesWritten = 0;

/**
 * One batch's file of the run's spool, compressed as its lines arrive. The file appears whole or not
 * at all (written under a temporary name, synced, then renamed by `commit`), so a process killed
 * while writing leaves no truncated file. File names start with the wall-clock time at which the
 * batch began: a run's files sort in the order written.
 */
export class RawSpoolFile {
  private readonly path: string;
  private readonly gzip = createGzip({ level: RAW_SPOOL_GZIP_LEVEL, chunkSize: RAW_SPOOL_GZIP_CHUNK_BYTES });
  private readonly written: Promise<void>;
  private chunks = 0;

  constructor(dataDir: string, runId: string) {
    const dir = dataFolder(dataDir).rawSpoolOfRun(runId);
    const path = join(
      dir,
      `${String(Date.now()).padStart(13, '0')}-${process.pid}-${String(++filesWritten).padStart(9, '0')}.ndjson.gz`,
    );
    this.path = path;
    this.written = (async () => {
      await mkdir(dir, { recursive: true });
      await pipeline(this.gzip, createWriteStream(`${path}.partial`, { flags: 'wx' }));
    })();
    // Awaited by commit; until then a failure must not count as unhandled.
    this.written.catch(() => undefined);
  }

  /** Appends lines (NDJSON text, each ending with a newline); one compression job per chunk. */
  append(chunk: Buffer): void {
    this.chunks++;
    this.gzip.write(chunk);
  }

  /** Finishes the file and gives it its name; undefined when nothing was appended (no file is left). */
  async commit(): Promise<string | undefined> {
    this.gzip.end();
    await this.written;
    const partial = `${this.path}.partial`;
    if (this.chunks === 0) {
      await rm(partial, { force: true });
      return undefined;
    }
    const file = await open(partial, 'r+');
    try {
      // On disk before the batch's commit, so a committed batch never lacks its spool after a power cut.
      await file.datasync();
    } finally {
      await file.close();
    }
    await rename(partial, this.path);
    return this.path;
  }
}

/**
 * Removes the run's spool files this process left unfinished (a batch a disk fault kept from its
 * commit), and the run's spool folder when nothing else is in it.
 */
export async function removeUnfinishedSpoolFiles(dataDir: string, runId: string): Promise<void> {
  const dir = dataFolder(dataDir).rawSpoolOfRun(runId);
  const names = await readdir(dir).catch(() => []);
  const ours = names.filter((name) => name.endsWith('.partial') && name.includes(`-${process.pid}-`));
  for (const name of ours) await rm(join(dir, name), { force: true });
  if (ours.length === names.length) await rm(dir, { recursive: true, force: true });
}

/** The runs that have a raw spool, oldest first (by the time their first file was written). */
export async function listSpooledRuns(dataDir: string): Promise<string[]> {
  const root = dataFolder(dataDir).rawSpool;
  const entries = await readdir(root, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const runs: { runId: string; first: string }[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const files = await spoolFilesOfRun(dataDir, entry.name);
    if (files.length > 0) runs.push({ runId: entry.name, first: files[0]!.name });
  }
  return runs.sort((a, b) => a.first.localeCompare(b.first) || a.runId.localeCompare(b.runId)).map((r) => r.runId);
}

/** A run's spool files in the order written; none when the run has no spool. */
export async function spoolFilesOfRun(dataDir: string, runId: string): Promise<{ name: string; path: string }[]> {
  const dir = dataFolder(dataDir).rawSpoolOfRun(runId);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return names
    .filter((name) => SPOOL_FILE.test(name))
    .sort()
    .map((name) => ({ name, path: join(dir, name) }));
}

/**
 * The answers of one spool file, in order. Rejects when the file cannot be read whole (missing,
 * unreadable, a torn gzip stream, a line that is not JSON): the caller then uses none of it.
 */
export async function readRawSpoolFile(path: string): Promise<RawResponse[]> {
  const responses: RawResponse[] = [];
  const file = createReadStream(path);
  const gunzip = file.pipe(createGunzip());
  const lines = createInterface({ input: gunzip, crlfDelay: Infinity });
  const failed = new Promise<never>((_, reject) => {
    file.once('error', reject);
    gunzip.once('error', reject);
  });
  const reading = (async () => {
    for await (const line of lines) {
      if (line === '') continue;
      const { orderCode, accountAlias, seenAt } = JSON.parse(line) as AnswerSighting;
      responses.push({ orderCode, accountAlias, seenAt, body: answerTextOfSpoolLine(line) });
    }
  })();
  // When the stream fails first, the lines may still fail after: that is the same failure.
  reading.catch(() => undefined);
  try {
    await Promise.race([reading, failed]);
  } finally {
    lines.close();
    file.destroy();
  }
  return responses;
}
