import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ProductError } from '../src/errors/product-error.js';
import { formatDisplayTime } from '../src/reports/display-time.js';

/** Who holds a job's lock: written into the lock file by the holder. */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  /** The holder's start time in the kernel's clock ticks (Linux), so a reused PID is not taken for it. */
  readonly processStart: string | null;
  readonly acquiredAt: string;
  readonly token: string;
}

/** A second run of a job while another holds its lock. */
export class JobLockHeldError extends ProductError {
  /** `zone`: the display time zone the message gives the holder's start in. */
  constructor(
    readonly job: string,
    readonly holder: LockHolder,
    zone: string,
  ) {
    const since = Date.parse(holder.acquiredAt);
    super(
      'JOB_LOCKED',
      `job ${job} is already running (PID ${holder.pid} on ${holder.hostname}, since ${Number.isNaN(since) ? holder.acquiredAt : formatDisplayTime(since, zone)})`,
    );
  }
}

export interface JobLock {
  readonly path: string;
  /** Holders whose lock this one took over: they were killed without releasing it. */
  readonly tookOverFrom: LockHolder | null;
  release(): Promise<void>;
}

/** Field 22 of /proc/PID/stat: when the process started; null where there is no /proc. */
async function processStartOf(pid: number): Promise<string | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the holder is still running: same host, its PID alive, and (where known) the same process start. */
async function isAlive(holder: LockHolder): Promise<boolean> {
  if (holder.hostname !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (holder.processStart === null) return true;
  return (await processStartOf(holder.pid)) === holder.processStart;
}

async function readHolder(path: string): Promise<LockHolder | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockHolder;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // Half written by a holder killed while creating it: nobody holds it.
    return { pid: 0, hostname: hostname(), processStart: null, acquiredAt: 'unknown', token: '' };
  }
}

/**
 * Takes the job's lock file in `dir`, created exclusively. A lock whose holder is gone (killed on
 * this host, PID dead or reused) is stale and taken over; one held by a live process, or by another
 * host, refuses with JobLockHeldError, its message in the display time zone `zone`.
 */
export async function acquireJobLock(dir: string, job: string, zone: string): Promise<JobLock> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${job}.lock`);
  const me: LockHolder = {
    pid: process.pid,
    hostname: hostname(),
    processStart: await processStartOf(process.pid),
    acquiredAt: new Date().toISOString(),
    token: randomUUID(),
  };
  // Written whole beside the lock, then linked to its name (which fails if the lock exists): another
  // process never sees the lock empty, which it would take for one left by a holder killed mid-write.
  const staged = `${path}.new-${me.token}`;
  const file = await open(staged, 'wx', 0o644);
  try {
    await file.writeFile(JSON.stringify(me));
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    return await takeLock(path, staged, me, job, zone);
  } finally {
    await rm(staged, { force: true });
  }
}

async function takeLock(path: string, staged: string, me: LockHolder, job: string, zone: string): Promise<JobLock> {
  let tookOverFrom: LockHolder | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await link(staged, path);
      return { path, tookOverFrom, release: () => releaseLock(path, me.token) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readHolder(path);
    if (holder === undefined) continue;
    if (await isAlive(holder)) throw new JobLockHeldError(job, holder, zone);
    // Moved aside before removal, so of two processes taking over the same stale lock only one succeeds.
    const aside = `${path}.stale-${me.token}`;
    try {
      await rename(path, aside);
      await rm(aside, { force: true });
      tookOverFrom = holder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`could not take the lock ${path}: it changed hands three times`);
}

async function releaseLock(path: string, token: string): Promise<void> {
  const holder = await readHolder(path);
  if (holder?.token === token) await rm(path, { force: true });
}
