import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { ProductError } from '../errors/product-error.js';

/** Why the system refused a path, for each error that means the user named a place the program cannot write. */
const REFUSALS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a folder',
};

/** A folder or file the program writes (data folder, journal, warehouse folder, keys file) that the system refuses. */
export class PathNotWritableError extends ProductError {
  constructor(
    readonly path: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super('PATH_NOT_WRITABLE', `cannot write ${path}: ${reason}`, options);
  }
}

/**
 * Why the nearest existing folder above `path` refuses writing, as the system tells it: a folder made
 * with `recursive` on a read-only file system fails with ENOENT, not the cause. Undefined when it
 * does not refuse.
 */
function refusalAbove(path: string): NodeJS.ErrnoException | undefined {
  let folder = dirname(path);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  try {
    accessSync(folder, constants.W_OK);
    return undefined;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

/**
 * The error as a path the program cannot write, when it is the system refusing a path: undefined for
 * anything else. A folder made with `recursive` over a file meets EEXIST, which means the same there.
 */
export function unwritablePathError(error: unknown): PathNotWritableError | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, path, syscall } = error as NodeJS.ErrnoException;
  if (code === undefined || path === undefined) return undefined;
  if (code === 'ENOENT' && syscall === 'mkdir') {
    const refusal = refusalAbove(path)?.code;
    const reason = refusal === undefined ? undefined : REFUSALS[refusal];
    return reason === undefined ? undefined : new PathNotWritableError(path, reason, { cause: error });
  }
  const reason =
    REFUSALS[code] ?? (code === 'EEXIST' && syscall === 'mkdir' ? 'a file is in the way of the folder' : undefined);
  return reason === undefined ? undefined : new PathNotWritableError(path, reason, { cause: error });
}
