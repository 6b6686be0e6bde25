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
 * The error as a path the program cannot write, when it is the system refusing a path: undefined for
 * anything else. A folder made with `recursive` over a file meets EEXIST, which means the same there.
 */
export function unwritablePathError(error: unknown): PathNotWritableError | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, path, syscall } = error as NodeJS.ErrnoException;
  if (code === undefined || path === undefined) return undefined;
  const reason =
    REFUSALS[code] ?? (code === 'EEXIST' && syscall === 'mkdir' ? 'a file is in the way of the folder' : undefined);
  return reason === undefined ? undefined : new PathNotWritableError(path, reason, { cause: error });
}
