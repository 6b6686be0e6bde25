import { ProductError } from '../errors/product-error.js';

/** Failures of the warehouse itself (cannot open, not a DuckDB file, not a warehouse, in use, schema too new, out of memory). */
export class WarehouseError extends ProductError {
  constructor(
    message: string,
    options?: ErrorOptions,
    code:
      | 'WAREHOUSE_FAILED'
      | 'WAREHOUSE_BUSY'
      | 'WAREHOUSE_OUT_OF_MEMORY'
      | 'WAREHOUSE_NOT_DUCKDB'
      | 'WAREHOUSE_NOT_OURS'
      | 'WAREHOUSE_NO_ROOM' = 'WAREHOUSE_FAILED',
  ) {
    super(code, message, options);
  }
}

/** Another process (or another open in this process) holds the warehouse file. */
export class WarehouseBusyError extends WarehouseError {
  /** Whether the refused open was read-only: DuckDB refuses even those while another process writes. */
  readonly readOnly: boolean;

  constructor(
    readonly path: string,
    /** The process holding the file, when DuckDB names it. */
    readonly pid: number | null,
    options?: ErrorOptions & { holder?: 'another process' | 'this process'; readOnly?: boolean },
  ) {
    const holder = options?.holder ?? 'another process';
    super(`warehouse ${path} is in use by ${holder}${pid === null ? '' : ` (PID ${pid})`}`, options, 'WAREHOUSE_BUSY');
    this.readOnly = options?.readOnly ?? false;
  }
}

/** A setting that makes a load fit DuckDB's memory: a smaller batch size, or a larger memory limit. */
export type MemorySetting = 'batchSize' | 'memoryLimit';

/**
 * DuckDB ran out of its memory limit. `settings` names what would help as data, so each interface
 * can word it (a command's flag, a job's configuration key); empty when none of them would.
 */
export class WarehouseOutOfMemoryError extends WarehouseError {
  constructor(
    message: string,
    readonly settings: readonly MemorySetting[],
    options?: ErrorOptions,
  ) {
    super(message, options, 'WAREHOUSE_OUT_OF_MEMORY');
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
 * DuckDB refusing what a read-only open does not allow: a file other than the warehouse ("Permission
 * Error: Cannot access file ..."), an extension ("Permission Error: Loading external extensions is
 * disabled ..."), or a setting once they are locked ("... the configuration has been locked").
 */
export function isAccessRefusal(error: unknown): boolean {
  return error instanceof Error && /^Permission Error|the configuration has been locked/.test(error.message);
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

/**
 * DuckDB's out-of-memory error met outside a load that retries, with DuckDB's own first line, e.g.
 * `failed to allocate data of size 4.0 MiB (42.9 MiB/45.7 MiB used)`: a larger memory limit helps.
 */
export function outOfMemoryError(error: Error): WarehouseOutOfMemoryError {
  const detail = firstLineOf(error).replace(/^(Out of Memory Error|TransactionContext Error): /, '');
  return new WarehouseOutOfMemoryError(`DuckDB ran out of memory (${detail})`, ['memoryLimit'], { cause: error });
}
