/**
 * Every stable code a product error carries, with its default message. Callers branch on the code,
 * never on a message; the CLI maps each code to an exit code and to advice worded for the interface
 * in use. Messages state the problem only: which flag or configuration key would help is the CLI's
 * to say. The lookup and image-download codes are stored in the warehouse and never change.
 */
export const ERROR_CODES = {
  BAD_INPUT: 'an option, a file, a key or the configuration is wrong',
  PORT_IN_USE: 'the port is in use by another process',
  LISTEN_FAILED: 'cannot listen on the address',
  REPORT_FAILED: 'the report failed',
  WAREHOUSE_FAILED: 'the warehouse cannot be opened or written',
  WAREHOUSE_BUSY: 'the warehouse is in use by another process',
  WAREHOUSE_OUT_OF_MEMORY: 'DuckDB ran out of memory',
  WAREHOUSE_NOT_DUCKDB: 'the warehouse path names a file that is not a DuckDB database',
  WAREHOUSE_NOT_OURS: 'the warehouse path names a DuckDB database that is not a parcel-recon warehouse',
  WAREHOUSE_NO_ROOM: "the warehouse's file system has too little free room for the schema upgrade",
  QUERY_REFUSED: 'the query reads or writes a file, loads an extension or changes a setting',
  SOURCE_UNREADABLE: 'the order codes cannot be read',
  PARTNER_RECORDS_UNREADABLE: "the partner's records cannot be read",
  STATEMENT_UNREADABLE: 'the payout statement cannot be read',
  STATEMENT_HEADER_MISMATCH: "the payout statement's header does not fit its layout",
  SPOOL_NOT_FOUND: 'the run has no raw spool',
  OPERATION_NOT_OFFERED: 'the carrier does not offer the operation',
  REDIS_UNAVAILABLE: 'Redis cannot be reached',
  JOURNAL_BUSY: 'the callback journal is in use by another receiver',
  JOB_LOCKED: 'a run of the same job still holds its lock',
  LOOKUP_TIMEOUT: 'the carrier did not answer in time',
  LOOKUP_CONNECTION: 'the connection to the carrier failed',
  LOOKUP_HTTP_STATUS: 'the carrier answered an HTTP error',
  LOOKUP_RATE_LIMITED: 'the carrier answered HTTP 429',
  LOOKUP_MALFORMED: "the carrier's answer is malformed",
  LOOKUP_TOO_LARGE: "the carrier's answer is over the size limit",
  EXCEPTION: 'the carrier answered EXCEPTION',
  CARRIER_UNREACHABLE: 'the carrier cannot be reached: the run stopped sending',
  CARRIER_FAILING: 'the carrier answers nothing usable: the run stopped sending',
  HOST_NOT_ALLOWED: 'the image host is not on the allow-list',
  TOO_LARGE: 'the image is over the size limit',
  BAD_URL: 'the image link is not an http(s) URL',
  HTTP_STATUS: 'the image host answered an HTTP error',
  TRANSPORT: 'the image download failed',
  UNSAFE_PATH: "the image's file name leaves the download folder",
  PATH_NOT_WRITABLE: 'a folder or file the program writes cannot be written',
  DISK_FULL: 'the disk has no space left, or the disk quota is exceeded',
  SNAPSHOT_NOT_FOUND: 'the path names no snapshot of the warehouse',
  SNAPSHOT_PATH_TAKEN:
    'the path of the snapshot is a file or folder that is not a snapshot folder, or another export writes it',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The base of the errors a user may see: a stable `code` and a one-line message that can be shown as it is. */
export abstract class ProductError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
