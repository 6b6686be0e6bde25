import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createGunzip, gzip } from 'node:zlib';
import type { CarrierInstant } from '../carrier/contract.js';

/**
 * The raw spool: every tracking answer body a run received, as it came, so the normalized tables can
 * be rebuilt without a lookup (`parcel-recon replay`). One gzip-compressed NDJSON file per committed
 * batch under `DATA_DIR/raw/RUN_ID/`. A line holds the order code, the key's alias, when it was seen
 * and the body; never the key (the carrier's answer does not carry it).
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
const gzipAsync = promisify(gzip);

const SPOOL_FILE = /^(\d{13})-\d+-\d+\.ndjson\.gz$/;
let filesWritten = 0;

export function rawSpoolRoot(dataDir: string): string {
  return join(dataDir, 'raw');
}

/**
 * Writes one batch's answers as a new file of the run's spool. The file appears whole or not at all
 * (written under a temporary name, synced, then renamed), so a process killed while writing leaves
 * no truncated file. File names start with the wall-clock time: a run's files sort in the order written.
 */
export async function writeRawSpoolFile(dataDir: string, runId: string, responses: readonly RawResponse[]): Promise<string | undefined> {
  if (responses.length === 0) return undefined;
  const dir = join(rawSpoolRoot(dataDir), runId);
  // Named before the first await: files written concurrently still sort in the order they were asked for.
  const name = `${String(Date.now()).padStart(13, '0')}-${process.pid}-${String(++filesWritten).padStart(9, '0')}.ndjson.gz`;
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  const partial = `${path}.partial`;
  let lines = '';
  for (const r of responses) lines += `${JSON.stringify({ orderCode: r.orderCode, accountAlias: r.accountAlias, seenAt: r.seenAt, body: r.body })}\n`;
  // One compression job for the whole batch: a stream would queue one thread-pool job per line behind the warehouse's queries.
  const compressed = await gzipAsync(lines, { level: RAW_SPOOL_GZIP_LEVEL });
  const written = await open(partial, 'wx');
  try {
    await written.writeFile(compressed);
    // On disk before the batch's commit, so a committed batch never lacks its spool after a power cut.
    await written.datasync();
  } finally {
    await written.close();
  }
  await rename(partial, path);
  return path;
}

/** The runs that have a raw spool, oldest first (by the time their first file was written). */
export async function listSpooledRuns(dataDir: string): Promise<string[]> {
  const root = rawSpoolRoot(dataDir);
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
  const dir = join(rawSpoolRoot(dataDir), runId);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return names
    .filter((name) => SPOOL_FILE.test(name))
    .sort()
    .map((name) => ({ name, path: join(dir, name) }));
}

/** The answers of one spool file, in order. */
export async function readRawSpoolFile(path: string): Promise<RawResponse[]> {
  const responses: RawResponse[] = [];
  const gunzip = createReadStream(path).pipe(createGunzip());
  const lines = createInterface({ input: gunzip, crlfDelay: Infinity });
  const failed = new Promise<never>((_, reject) => gunzip.once('error', reject));
  const reading = (async () => {
    for await (const line of lines) {
      if (line === '') continue;
      responses.push(JSON.parse(line) as RawResponse);
    }
  })();
  await Promise.race([reading, failed]);
  return responses;
}
