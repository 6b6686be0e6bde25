import { diskFaultOf } from '../errors/disk-fault.js';
import { EXIT, type ExitCode } from '../errors/exit-codes.js';
import { type ErrorCode, ProductError } from '../errors/product-error.js';
import {
  isOutOfMemory,
  type MemorySetting,
  outOfMemoryError,
  WarehouseBusyError,
  WarehouseOutOfMemoryError,
} from '../warehouse/warehouse-errors.js';

/**
 * The interface a failure is told in: a command the operator typed (its flags), or a job run from
 * the configuration file (its keys), where a flag would be advice the operator cannot follow.
 */
export type Wording = 'command' | 'job';

/** The exit code of each failure; the lookup and image codes end a run as a failure when they end it at all. */
const EXIT_CODE_OF: Readonly<Record<ErrorCode, ExitCode>> = {
  BAD_INPUT: EXIT.BAD_INPUT,
  PORT_IN_USE: EXIT.BUSY,
  LISTEN_FAILED: EXIT.FAILURE,
  REPORT_FAILED: EXIT.FAILURE,
  WAREHOUSE_FAILED: EXIT.FAILURE,
  WAREHOUSE_BUSY: EXIT.BUSY,
  WAREHOUSE_OUT_OF_MEMORY: EXIT.FAILURE,
  WAREHOUSE_NOT_DUCKDB: EXIT.BAD_INPUT,
  WAREHOUSE_NOT_OURS: EXIT.BAD_INPUT,
  WAREHOUSE_NO_ROOM: EXIT.FAILURE,
  QUERY_REFUSED: EXIT.BAD_INPUT,
  SOURCE_UNREADABLE: EXIT.BAD_INPUT,
  PARTNER_RECORDS_UNREADABLE: EXIT.BAD_INPUT,
  STATEMENT_UNREADABLE: EXIT.BAD_INPUT,
  STATEMENT_HEADER_MISMATCH: EXIT.BAD_INPUT,
  SPOOL_NOT_FOUND: EXIT.BAD_INPUT,
  OPERATION_NOT_OFFERED: EXIT.BAD_INPUT,
  REDIS_UNAVAILABLE: EXIT.FAILURE,
  JOURNAL_BUSY: EXIT.BUSY,
  JOB_LOCKED: EXIT.JOB_LOCKED,
  LOOKUP_TIMEOUT: EXIT.FAILURE,
  LOOKUP_CONNECTION: EXIT.FAILURE,
  LOOKUP_HTTP_STATUS: EXIT.FAILURE,
  LOOKUP_RATE_LIMITED: EXIT.FAILURE,
  LOOKUP_MALFORMED: EXIT.FAILURE,
  LOOKUP_TOO_LARGE: EXIT.FAILURE,
  EXCEPTION: EXIT.FAILURE,
  CARRIER_UNREACHABLE: EXIT.FAILURE,
  CARRIER_FAILING: EXIT.FAILURE,
  HOST_NOT_ALLOWED: EXIT.FAILURE,
  TOO_LARGE: EXIT.FAILURE,
  BAD_URL: EXIT.FAILURE,
  HTTP_STATUS: EXIT.FAILURE,
  TRANSPORT: EXIT.FAILURE,
  UNSAFE_PATH: EXIT.FAILURE,
  PATH_NOT_WRITABLE: EXIT.BAD_INPUT,
  DISK_FULL: EXIT.FAILURE,
  SNAPSHOT_NOT_FOUND: EXIT.BAD_INPUT,
  SNAPSHOT_PATH_TAKEN: EXIT.BAD_INPUT,
};

export function exitCodeOf(code: ErrorCode): ExitCode {
  return EXIT_CODE_OF[code];
}

/** Each memory setting as `track`'s flag and as the configuration's key of the jobs' tracking step. */
const SETTING_NAMES: Readonly<Record<MemorySetting, Readonly<Record<Wording, string>>>> = {
  batchSize: { command: '--batch-size', job: 'track.batchSize' },
  memoryLimit: { command: '--memory-limit', job: 'track.memoryLimit' },
};

/** Which way each setting goes to make a load fit. */
const SETTING_CHANGES: Readonly<Record<MemorySetting, string>> = { batchSize: 'lower', memoryLimit: 'raise' };

function memoryAdvice(settings: readonly MemorySetting[], wording: Wording): string {
  if (settings.length === 0) return 'the memory limit is too small for it';
  const changes = settings.map((setting) => `${SETTING_CHANGES[setting]} ${SETTING_NAMES[setting][wording]}`);
  return wording === 'job' ? `${changes.join(' or ')} in the configuration` : changes.join(' or ');
}

/** What the operator can do about a failure, in the words of the interface in use; undefined when its message says it all. */
export function adviceFor(error: ProductError, wording: Wording): string | undefined {
  if (error instanceof WarehouseOutOfMemoryError) return memoryAdvice(error.settings, wording);
  if (error.code === 'QUERY_REFUSED')
    return 'a query on the warehouse reads no other file, writes none, loads no extension and changes no setting';
  if (error.code === 'WAREHOUSE_NOT_OURS')
    return wording === 'job'
      ? 'nothing was written to it; name the warehouse, or a new file, in the configuration'
      : 'nothing was written to it; give --db the warehouse, or a new path to start one';
  if (error.code === 'WAREHOUSE_NO_ROOM')
    return 'nothing was changed; free room on that file system, or move the warehouse to a larger one, and run parcel-recon upgrade';
  if (error.code === 'STATEMENT_HEADER_MISMATCH')
    return 'nothing was imported; give --layout the layout the statement is written in, or map its columns in the configuration (payouts.layouts)';
  if (error.code === 'OPERATION_NOT_OFFERED')
    return wording === 'job'
      ? "nothing was sent; the finance audit quotes the configured carrier's orders: set carrier to one that offers it, or leave financeAudit.destinations unset"
      : 'nothing was sent; give --carrier a carrier that offers it';
  if (error.code === 'SNAPSHOT_NOT_FOUND') return 'write one first with parcel-recon export --to DIR';
  if (error.code === 'SNAPSHOT_PATH_TAKEN')
    return `give ${wording === 'job' ? 'export.to' : '--to'} a new path, or one an earlier export wrote; if another export writes it, wait for it to end`;
  if (error instanceof WarehouseBusyError)
    return error.readOnly
      ? 'DuckDB lets no other process open it, even read-only, while it is written; try again once that process has finished'
      : 'one process writes the warehouse at a time; try again once that process has finished';
  return undefined;
}

/** The one line a failure is told in: its message, then the advice for it. */
export function failureLine(error: ProductError, wording: Wording): string {
  const advice = adviceFor(error, wording);
  return advice === undefined ? error.message : `${error.message}: ${advice}`;
}

/**
 * The product error `error` is, DuckDB's own out-of-memory error included; a disk fault first, even
 * inside another error (the warehouse that cannot be opened on a read-only disk): its one line names
 * the path and the cause. Undefined for anything else.
 */
export function productErrorOf(error: unknown): ProductError | undefined {
  const diskFault = diskFaultOf(error);
  if (diskFault !== undefined) return diskFault;
  if (error instanceof ProductError) return error;
  if (error instanceof Error && isOutOfMemory(error)) return outOfMemoryError(error);
  return undefined;
}
