import {
  closeSync,
  createReadStream,
  createWriteStream,
  fdatasync,
  mkdirSync,
  openSync,
  rmSync,
  writevSync,
} from 'node:fs';
import { open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { constants, createGunzip, createGzip, gunzip } from 'node:zlib';
import type { CarrierInstant } from '../carriers/carrier-time.js';
import { diskFaultOf } from '../errors/disk-fault.js';
import { dataFolder } from '../warehouse/data-folder.js';
import {
  ANSWER_SPOOL_LINE_END,
  type AnswerLookup,
  type AnswerSighting,
  answerSpoolLineStart,
  answerTextOfSpoolLine,
  NO_ANSWER,
  type SnapshotSpoolFile,
} from '../warehouse/snapshot-spool-format.js';

/**
 * The raw spool, the run's one log of answers: every tracking answer body a run received, as it
 * came, so a killed run's answers are loaded instead of looked up again, each batch is loaded from
 * it, and the normalized tables can be rebuilt without a lookup (`parcel-recon replay`). One NDJSON
 * file per batch under `DATA_DIR/raw/RUN_ID/`, gzip-compressed once its batch has committed. A line
 * is an answerSpoolLine: the run, the order code, the key's alias, when it was seen, how the lookup
 * ended (AnswerLookup; not in files written before it was), and the body itself as `answer` (never
 * the key: the carrier's answer does not carry it).
 */
export interface RawResponse {
  readonly orderCode: string;
  readonly accountAlias: string;
  readonly seenAt: CarrierInstant;
  /** The answer's JSON text exactly as the carrier sent it. */
  readonly body: string;
}

/** A line of the answer log with how its lookup ended; undefined in files written before the log kept it. */
export interface LoggedAnswer extends RawResponse {
  readonly lookup: AnswerLookup | undefined;
}

/** Fast compression, off the lookups' path: the kept files are read back only by replay. */
const RAW_SPOOL_GZIP = { level: 1, chunkSize: 256 * 1024 } as const;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const LINE_END = Buffer.from(`${ANSWER_SPOOL_LINE_END}\n`);
const NO_ANSWER_BYTES = Buffer.from(NO_ANSWER);

const PLAIN = '.ndjson';
const COMPRESSED = '.gz';
const UNFINISHED = '.partial';
/** A finished file, plain (its batch committed, not yet compressed) or compressed. */
const SPOOL_FILE = /^(\d{13}-\d+-\d+)\.ndjson(\.gz)?$/;
const UNFINISHED_FILE = /^\d{13}-\d+-\d+\.ndjson\.partial$/;
let filesWritten = 0;
const syncData = promisify(fdatasync);
const gunzipBuffer = promisify(gunzip);

/** Line breaks in JSON text are whitespace between tokens (inside strings they are escaped): spaces keep the line whole. */
function withoutLineBreaks(body: Buffer): Buffer {
  if (!body.includes(LINE_FEED) && !body.includes(CARRIAGE_RETURN)) return body;
  const copy = Buffer.from(body);
  for (let i = 0; i < copy.length; i++) if (copy[i] === LINE_FEED || copy[i] === CARRIAGE_RETURN) copy[i] = SPACE;
  return copy;
}

/**
 * One batch's file of the run's answer log. Each answer's line is written as it comes, in one
 * synchronous write, nothing held back in the process: a process killed at any moment leaves every
 * answer it received on disk, in the file's `*.partial` name, for the resumed run to load
 * (salvageAnswers). Before the batch commits the file is synced and renamed: a finished file is whole,
 * and the loader reads the batch's snapshots from it while its compressed copy is written beside it
 * (compressAnswerLog); once the batch has committed the plain file goes. File names start with the
 * wall-clock time at which the batch began: a run's files sort in the order written.
 */
export class AnswerLogFile {
  private readonly dir: string;
  /** The finished file's name, before compression. */
  readonly path: string;
  private fd: number | undefined;
  private snapshots = 0;
  private otherLines = 0;
  private longestLineBytes = 0;

  constructor(dataDir: string, runId: string) {
    this.dir = dataFolder(dataDir).rawSpoolOfRun(runId);
    this.path = join(
      this.dir,
      `${String(Date.now()).padStart(13, '0')}-${process.pid}-${String(++filesWritten).padStart(9, '0')}${PLAIN}`,
    );
  }

  /**
   * Writes the answer's line; `body` empty for a carrier error without one (its lookup is kept). A disk
   * that refuses it is a disk fault naming the file (Node's error on a write names none), and the file
   * is removed: its batch is not committed, and is looked up again.
   */
  write(sighting: AnswerSighting, lookup: AnswerLookup, body: Buffer): void {
    const partial = `${this.path}${UNFINISHED}`;
    try {
      if (this.fd === undefined) {
        mkdirSync(this.dir, { recursive: true });
        this.fd = openSync(partial, 'wx');
      }
      const start = Buffer.from(answerSpoolLineStart(sighting, lookup), 'utf8');
      const answer = body.length === 0 ? NO_ANSWER_BYTES : withoutLineBreaks(body);
      writevSync(this.fd, [start, answer, LINE_END]);
      if (lookup.outcome === 'ok') this.snapshots++;
      else this.otherLines++;
      this.longestLineBytes = Math.max(this.longestLineBytes, start.length + answer.length + LINE_END.length);
    } catch (error) {
      const fault = diskFaultOf(error, partial);
      if (fault === undefined) throw error;
      // A full disk fails the warehouse's next commit too: the room this file took is given back at once.
      this.close();
      rmSync(partial, { force: true });
      throw fault;
    }
  }

  /**
   * Syncs the file and gives it its name, before the batch commits (so a committed batch never lacks
   * its answers after a power cut). Returns the file for the loader, `snapshots` false when it holds
   * none; undefined when nothing was written (no file is left).
   */
  async commit(): Promise<(SnapshotSpoolFile & { readonly snapshots: boolean }) | undefined> {
    if (this.fd === undefined) return undefined;
    const partial = `${this.path}${UNFINISHED}`;
    try {
      await syncData(this.fd);
    } catch (error) {
      throw diskFaultOf(error, partial) ?? error;
    } finally {
      this.close();
    }
    await rename(partial, this.path);
    return {
      path: this.path,
      longestLineBytes: this.longestLineBytes,
      // A file of snapshots alone is read without the filter on outcomes, streaming within less memory.
      answerLog: this.otherLines > 0,
      snapshots: this.snapshots > 0,
    };
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Writes the compressed copy of a finished answer log file, for keeping: under a temporary name, synced
 * and renamed; the plain file stays until its batch has committed (removePlainSpoolFile). Every
 * reader takes the compressed file when both are there, and reads the plain one alone as well.
 */
export async function compressAnswerLog(path: string): Promise<void> {
  const gzipPath = `${path}${COMPRESSED}`;
  const partial = `${gzipPath}${UNFINISHED}`;
  try {
    await pipeline(createReadStream(path), createGzip(RAW_SPOOL_GZIP), createWriteStream(partial));
    const out = await open(partial, 'r+');
    try {
      await out.datasync();
    } finally {
      await out.close();
    }
    await rename(partial, gzipPath);
  } catch (error) {
    await rm(partial, { force: true });
    throw diskFaultOf(error, partial) ?? error;
  }
}

/** The plain file of a batch whose compressed copy is written (compressAnswerLog). */
export async function removePlainSpoolFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The plain name of a batch's finished file, given either of its names. */
export function plainSpoolPath(path: string): string {
  return path.endsWith(COMPRESSED) ? path.slice(0, -COMPRESSED.length) : path;
}

/** Both forms of a batch's finished file, given either: its answers are kept elsewhere now. */
export async function removeSpoolFile(path: string): Promise<void> {
  const plain = plainSpoolPath(path);
  await rm(plain, { force: true });
  await rm(`${plain}${COMPRESSED}`, { force: true });
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

async function runFileNames(dataDir: string, runId: string): Promise<string[]> {
  return readdir(dataFolder(dataDir).rawSpoolOfRun(runId)).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
}

/**
 * A run's finished spool files in the order written, each batch's once (its compressed file when a
 * kill left both); none when the run has no spool.
 */
export async function spoolFilesOfRun(dataDir: string, runId: string): Promise<{ name: string; path: string }[]> {
  const dir = dataFolder(dataDir).rawSpoolOfRun(runId);
  const byBatch = new Map<string, string>();
  for (const name of (await runFileNames(dataDir, runId)).sort()) {
    const batch = SPOOL_FILE.exec(name)?.[1];
    // Sorted, a batch's compressed name comes after its plain one and takes its place.
    if (batch !== undefined) byBatch.set(batch, name);
  }
  return [...byBatch.values()].map((name) => ({ name, path: join(dir, name) }));
}

/**
 * A run's finished files that are plain, whether or not their compressed copy was written: a batch
 * whose plain file a kill left after its commit.
 */
export async function plainSpoolFilesOfRun(dataDir: string, runId: string): Promise<string[]> {
  const dir = dataFolder(dataDir).rawSpoolOfRun(runId);
  return (await runFileNames(dataDir, runId))
    .filter((name) => SPOOL_FILE.test(name) && name.endsWith(PLAIN))
    .sort()
    .map((name) => join(dir, name));
}

/** A run's unfinished answer log files (`*.partial`): the batches of a killed process, never committed. */
export async function unfinishedSpoolFilesOfRun(dataDir: string, runId: string): Promise<string[]> {
  const dir = dataFolder(dataDir).rawSpoolOfRun(runId);
  return (await runFileNames(dataDir, runId))
    .filter((name) => UNFINISHED_FILE.test(name))
    .sort()
    .map((name) => join(dir, name));
}

type StoredLine = AnswerSighting &
  Partial<Omit<Extract<AnswerLookup, { outcome: 'ok' | 'carrier_error' }>, 'outcome'>> & {
    readonly outcome?: AnswerLookup['outcome'];
  };

function loggedAnswerOfLine(line: string): LoggedAnswer {
  const { orderCode, accountAlias, seenAt, outcome, askedCode, origin, attempts, errorCode, errorMessage } = JSON.parse(
    line,
  ) as StoredLine;
  const body = answerTextOfSpoolLine(line);
  const sighting = { orderCode, accountAlias, seenAt, body };
  if (outcome === undefined) return { ...sighting, lookup: undefined };
  if (outcome === 'passed') return { ...sighting, lookup: { outcome } };
  return {
    ...sighting,
    lookup: {
      outcome,
      askedCode: askedCode ?? orderCode,
      origin: origin ?? '',
      attempts: attempts ?? 1,
      errorCode: errorCode ?? null,
      errorMessage: errorMessage ?? null,
    },
  };
}

/**
 * The whole lines of an answer log file (plain, compressed, or one a killed process cut off), in
 * order, carrier errors logged without an answer included: a line the kill cut short is left out (its
 * order is looked up again), as is one that is not JSON.
 */
export async function readAnswerLog(path: string): Promise<LoggedAnswer[]> {
  const { value: bytes, compressed } = await readEitherForm(path, (name) => readFile(name));
  const text = (compressed ? await gunzipBuffer(bytes, { finishFlush: constants.Z_SYNC_FLUSH }) : bytes).toString(
    'utf8',
  );
  const lines = text.split('\n');
  lines.pop();
  const answers: LoggedAnswer[] = [];
  for (const line of lines) {
    try {
      answers.push(loggedAnswerOfLine(line));
    } catch {
      // A line that is not JSON: left out.
    }
  }
  return answers;
}

/**
 * Reads a spool file with `read`, and tells whether what it read is compressed: a finished plain file
 * compressed since it was listed (its plain name gone) is read in its compressed form.
 */
async function readEitherForm<T>(
  path: string,
  read: (name: string) => Promise<T>,
): Promise<{ value: T; compressed: boolean }> {
  try {
    return { value: await read(path), compressed: path.endsWith(COMPRESSED) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !path.endsWith(PLAIN)) throw error;
    return { value: await read(`${path}${COMPRESSED}`), compressed: true };
  }
}

/** A read stream of the file, once it is open (a missing file rejects here, not as a stream error). */
function openedStream(name: string): Promise<Readable> {
  return new Promise<Readable>((resolve, reject) => {
    const file = createReadStream(name);
    file.once('error', reject);
    file.once('open', () => {
      file.off('error', reject);
      resolve(file);
    });
  });
}

/**
 * The answers of one spool file, in order (a carrier error logged without an answer is no answer).
 * Reads the files of every release, plain or compressed, those without how the lookup ended too.
 * Rejects when the file cannot be read whole (missing, unreadable, a torn gzip stream, a line that is
 * not JSON): the caller then uses none of it.
 */
export async function readRawSpoolFile(path: string): Promise<LoggedAnswer[]> {
  const responses: LoggedAnswer[] = [];
  const { value: file, compressed } = await readEitherForm(path, openedStream);
  const text = compressed ? file.pipe(createGunzip()) : file;
  const lines = createInterface({ input: text, crlfDelay: Infinity });
  const failed = new Promise<never>((_, reject) => {
    file.once('error', reject);
    text.once('error', reject);
  });
  const reading = (async () => {
    for await (const line of lines) {
      if (line === '') continue;
      const answer = loggedAnswerOfLine(line);
      if (answer.body !== NO_ANSWER) responses.push(answer);
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
