/**
 * Failures of the warehouse itself (cannot open, in use, schema too new). Each carries a stable
 * `code` for the caller's exit-code choice and a one-line message the operator can read as it is.
 */
export class WarehouseError extends Error {
  readonly code: string = 'WAREHOUSE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WarehouseError';
  }
}

/** Another process (or another open in this process) holds the warehouse file. */
export class WarehouseBusyError extends WarehouseError {
  override readonly code = 'WAREHOUSE_BUSY';

  constructor(
    readonly path: string,
    /** The process holding the file, when DuckDB names it. */
    readonly pid: number | null,
    options?: { cause?: unknown; holder?: 'another process' | 'this process' },
  ) {
    const holder = options?.holder ?? 'another process';
    super(`warehouse ${path} is in use by ${holder}${pid === null ? '' : ` (PID ${pid})`}`, options);
    this.name = 'WarehouseBusyError';
  }
}

/** The DuckDB message when another process holds the file's lock, e.g. `... (PID 1234) by user ...`. */
const CONFLICTING_LOCK = /Could not set lock on file[^\n]*Conflicting lock is held in[^\n]*?\(PID (\d+)\)/;

/** The holder's PID when `error` is DuckDB's lock conflict, else undefined. */
export function lockHolderPid(error: unknown): number | null | undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (!message.includes('Could not set lock on file')) return undefined;
  const match = CONFLICTING_LOCK.exec(message);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** The first line of an error's message: DuckDB appends the SQL and a caret on the following lines. */
export function firstLineOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0] ?? '';
}

/**
 * DuckDB running out of its memory limit: a statement's "Out of Memory Error", or a commit that could
 * not allocate a block ("TransactionContext Error: Failed to commit: could not allocate block ...").
 */
export function isOutOfMemory(error: unknown): boolean {
  return (
    error instanceof Error &&
    /^Out of Memory Error|could not allocate block|failed to (allocate|pin) .*\bused\)/i.test(error.message)
  );
}

/** DuckDB's own first line of an out-of-memory error, e.g. `failed to allocate data of size 4.0 MiB (42.9 MiB/45.7 MiB used)`. */
export function outOfMemoryDetail(error: Error): string {
  return firstLineOf(error).replace(/^(Out of Memory Error|TransactionContext Error): /, '');
}
