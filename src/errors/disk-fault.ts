import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ProductError } from './product-error.js';

/**
 * Why the system refused to write a path, for each error that means a place the program cannot write
 * (a folder or file the user named or the program keeps): the user's to fix before running again.
 */
const REFUSALS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a folder',
};

/** Why a write failed part way, for each error that means the disk has no room left for it. */
const NO_ROOM: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
};

/** The system's own words for each fault, as DuckDB quotes them after the file's name. */
const SYSTEM_WORDS: Readonly<Record<string, string>> = {
  'Permission denied': 'EACCES',
  'Operation not permitted': 'EPERM',
  'Read-only file system': 'EROFS',
  'No space left on device': 'ENOSPC',
  'Disk quota exceeded': 'EDQUOT',
};

/** DuckDB's I/O error: `... file "PATH": No space left on device` (a file or a folder it opens, writes or syncs). */
const DUCKDB_FILE_FAULT = new RegExp(`"([^"\\n]+)": (${Object.keys(SYSTEM_WORDS).join('|')})`);

/** A folder or file the program writes (data folder, journal, warehouse, report, snapshot, download folder) that the system refuses. */
export class PathNotWritableError extends ProductError {
  declare readonly code: 'PATH_NOT_WRITABLE';

  constructor(
    readonly path: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super('PATH_NOT_WRITABLE', `cannot write ${path}: ${reason}`, options);
  }
}

/** A write that found no room left on the disk (or over the user's disk quota). */
export class DiskFullError extends ProductError {
  declare readonly code: 'DISK_FULL';

  constructor(
    readonly path: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super('DISK_FULL', `cannot write ${path}: ${reason}`, options);
  }
}

export type DiskFault = PathNotWritableError | DiskFullError;

function faultOfCode(code: string, path: string, cause: unknown): DiskFault | undefined {
  const refusal = REFUSALS[code];
  if (refusal !== undefined) return new PathNotWritableError(path, refusal, { cause });
  const noRoom = NO_ROOM[code];
  return noRoom === undefined ? undefined : new DiskFullError(path, noRoom, { cause });
}

/**
 * The error as a disk fault, when it is the system refusing to write a path or finding no room for a
 * write: Node's own errors (their path, else `path` for a write on an open file), DuckDB's I/O errors
 * (the file they quote), or either as the cause of another error. Undefined for anything else. A
 * folder made with `recursive` over a file meets EEXIST, which means the same as ENOTDIR there.
 */
export function diskFaultOf(error: unknown, path?: string): DiskFault | undefined {
  for (let link = error, depth = 0; link instanceof Error && depth < 5; link = link.cause, depth++) {
    if (link instanceof PathNotWritableError || link instanceof DiskFullError) return link;
    const { code, syscall } = link as NodeJS.ErrnoException;
    const named = (link as NodeJS.ErrnoException).path ?? path;
    if (code !== undefined && named !== undefined) {
      if (code === 'EEXIST' && syscall === 'mkdir')
        return new PathNotWritableError(named, 'a file is in the way of the folder', { cause: link });
      const fault = faultOfCode(code, named, link);
      if (fault !== undefined) return fault;
    }
    const quoted = DUCKDB_FILE_FAULT.exec(link.message);
    if (quoted !== null) return faultOfCode(SYSTEM_WORDS[quoted[2]!]!, quoted[1]!, link);
  }
  return undefined;
}

/** Whether the error is a disk fault: what a run cannot go on after, and leaves nothing partial behind. */
export function isDiskFault(error: unknown): boolean {
  return diskFaultOf(error) !== undefined;
}

/**
 * Makes a folder and the folders above it; a disk fault when the system refuses one. Node's recursive
 * mkdir answers ENOENT where a read-only disk refused a folder: then they are made one by one, from
 * the top, which meets the real cause.
 */
export async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw diskFaultOf(error) ?? error;
  }
  const folders: string[] = [];
  for (let folder = resolve(path); dirname(folder) !== folder; folder = dirname(folder)) folders.unshift(folder);
  for (const folder of folders) {
    try {
      await mkdir(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw diskFaultOf(error) ?? error;
    }
  }
}
