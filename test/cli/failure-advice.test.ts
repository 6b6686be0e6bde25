import { describe, expect, it } from 'vitest';
import type { LockHolder } from '../../jobs/job-lock.js';
import { JobLockHeldError } from '../../jobs/job-lock.js';
import { JournalBusyError } from '../../src/callbacks/callback-journal.js';
import { ImageDownloadRefused } from '../../src/carriers/client/image-download.js';
import {
  CarrierExceptionFailure,
  ConnectionFailure,
  HttpStatusFailure,
  LookupTimeoutFailure,
  MalformedAnswerFailure,
  RateLimitedFailure,
} from '../../src/carriers/client/lookup-failures.js';
import { adviceFor, exitCodeOf, failureLine, productErrorOf } from '../../src/cli/failure-advice.js';
import { EXIT, RUN_EXIT_CODES } from '../../src/errors/exit-codes.js';
import { ERROR_CODES, type ErrorCode, ProductError } from '../../src/errors/product-error.js';
import { UserError } from '../../src/errors/user-error.js';
import { OperationNotOfferedError } from '../../src/pipeline/offered-operations.js';
import { UnknownSpoolError } from '../../src/pipeline/tracking/replay-runs.js';
import { RedisUnavailableError } from '../../src/quota/redis-connection.js';
import { PartnerRecordsError } from '../../src/reports/partner-records.js';
import { SourceError } from '../../src/sources/order-code-source.js';
import { StatementError } from '../../src/sources/payout-statement-lines.js';
import { WarehouseBusyError, WarehouseError, WarehouseOutOfMemoryError } from '../../src/warehouse/warehouse-errors.js';

const HOLDER: LockHolder = {
  pid: 4242,
  hostname: 'night-host',
  processStart: null,
  acquiredAt: '2026-01-02T02:00:00+07:00',
  token: 't',
};

const LOADING_INPUTS =
  'DuckDB ran out of memory (memory_limit 9.5 MiB) loading 10000 input rows, even after a checkpoint';
const LOADING_LOOKUPS =
  'DuckDB ran out of memory (memory_limit 45.7 MiB) loading a batch of 1841 lookups, even after a checkpoint';

describe('product errors', () => {
  it('each kind has its class name and a stable code', () => {
    const errors: [ProductError, string, ErrorCode][] = [
      [new UserError('--from: after --to'), 'UserError', 'BAD_INPUT'],
      [new UserError('port 1 is in use', 'PORT_IN_USE'), 'UserError', 'PORT_IN_USE'],
      [new WarehouseError('cannot open warehouse w'), 'WarehouseError', 'WAREHOUSE_FAILED'],
      [new WarehouseBusyError('w.duckdb', 7), 'WarehouseBusyError', 'WAREHOUSE_BUSY'],
      [new WarehouseOutOfMemoryError(LOADING_INPUTS, []), 'WarehouseOutOfMemoryError', 'WAREHOUSE_OUT_OF_MEMORY'],
      [new SourceError('orders.csv is empty'), 'SourceError', 'SOURCE_UNREADABLE'],
      [new PartnerRecordsError('no such file'), 'PartnerRecordsError', 'PARTNER_RECORDS_UNREADABLE'],
      [new StatementError('week.csv: no such file'), 'StatementError', 'STATEMENT_UNREADABLE'],
      [
        new StatementError('week.csv: the header does not fit layout ghn', 'STATEMENT_HEADER_MISMATCH'),
        'StatementError',
        'STATEMENT_HEADER_MISMATCH',
      ],
      [new UnknownSpoolError('run-1', 'data'), 'UnknownSpoolError', 'SPOOL_NOT_FOUND'],
      [
        new OperationNotOfferedError('ghn', 'price', ['247express']),
        'OperationNotOfferedError',
        'OPERATION_NOT_OFFERED',
      ],
      [new RedisUnavailableError('cannot reach Redis'), 'RedisUnavailableError', 'REDIS_UNAVAILABLE'],
      [new JournalBusyError('journal', 7), 'JournalBusyError', 'JOURNAL_BUSY'],
      [new JobLockHeldError('nightly', HOLDER, 'Asia/Ho_Chi_Minh'), 'JobLockHeldError', 'JOB_LOCKED'],
    ];
    for (const [error, name, code] of errors) {
      expect(error).toBeInstanceOf(ProductError);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(Object.keys(ERROR_CODES)).toContain(code);
    }
    expect(new WarehouseOutOfMemoryError(LOADING_INPUTS, [])).toBeInstanceOf(WarehouseError);
  });

  it("tells a carrier without the operation asked in one line, exit 2, in each interface's words", () => {
    const error = new OperationNotOfferedError('ghn', 'images', ['247express']);
    expect(exitCodeOf(error.code)).toBe(2);
    expect(failureLine(error, 'command')).toBe(
      'ghn offers no order images; images runs for 247express: nothing was sent; give --carrier a carrier that offers it',
    );
    expect(failureLine(new OperationNotOfferedError('ghn', 'price', ['247express']), 'job')).toBe(
      "ghn offers no price calculation; price runs for 247express: nothing was sent; the finance audit quotes the configured carrier's orders: set carrier to one that offers it, or leave financeAudit.destinations unset",
    );
  });

  it('keeps the lookup and image-download codes the warehouse stores', () => {
    expect(new LookupTimeoutFailure(100).code).toBe('LOOKUP_TIMEOUT');
    expect(new ConnectionFailure('ECONNRESET').code).toBe('LOOKUP_CONNECTION');
    expect(new HttpStatusFailure(503).code).toBe('LOOKUP_HTTP_STATUS');
    expect(new RateLimitedFailure(1000).code).toBe('LOOKUP_RATE_LIMITED');
    expect(new MalformedAnswerFailure('no data').code).toBe('LOOKUP_MALFORMED');
    expect(new CarrierExceptionFailure('EXCEPTION', null).code).toBe('EXCEPTION');
    const refused = new ImageDownloadRefused('TOO_LARGE', 'the file is over 10 bytes');
    expect(refused).toBeInstanceOf(ProductError);
    expect(refused.record).toBe('TOO_LARGE: the file is over 10 bytes');
  });

  it('states the problem without naming a flag', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) expect(ERROR_CODES[code]).not.toMatch(/--|\./);
    expect(new WarehouseOutOfMemoryError(LOADING_LOOKUPS, ['batchSize', 'memoryLimit']).message).toBe(LOADING_LOOKUPS);
  });
});

describe('a path the program cannot write', () => {
  const refused = (code: string, syscall: string, path: string) =>
    Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });

  it('is one line naming the path, exit 2, for each way the system refuses it', () => {
    for (const [code, reason] of [
      ['EACCES', 'permission denied'],
      ['EROFS', 'read-only file system'],
      ['ENOTDIR', 'a part of the path is a file, not a folder'],
    ]) {
      const failure = productErrorOf(refused(code!, 'open', '/srv/data/spool'));
      expect(failure?.code).toBe('PATH_NOT_WRITABLE');
      expect(failureLine(failure!, 'command')).toBe(`cannot write /srv/data/spool: ${reason}`);
    }
    expect(productErrorOf(refused('EEXIST', 'mkdir', '/srv/a-file'))?.message).toBe(
      'cannot write /srv/a-file: a file is in the way of the folder',
    );
    expect(exitCodeOf('PATH_NOT_WRITABLE')).toBe(2);
  });

  it('is one line naming the path, exit 1, for a disk with no room, from Node or from DuckDB', () => {
    for (const [code, reason] of [
      ['ENOSPC', 'no space left on the device'],
      ['EDQUOT', 'the disk quota is exceeded'],
    ]) {
      const failure = productErrorOf(refused(code!, 'write', '/srv/data/spool/answers.ndjson'));
      expect(failure?.code).toBe('DISK_FULL');
      expect(failureLine(failure!, 'command')).toBe(`cannot write /srv/data/spool/answers.ndjson: ${reason}`);
    }
    const duckdb = new Error(
      'TransactionContext Error: Failed to commit: Could not write file "/srv/data/recon.duckdb.wal": No space left on device',
    );
    expect(productErrorOf(new WarehouseError('cannot load', { cause: duckdb }))?.message).toBe(
      'cannot write /srv/data/recon.duckdb.wal: no space left on the device',
    );
    expect(
      productErrorOf(new Error('IO Error: Cannot open file "/ro/recon.duckdb": Read-only file system'))?.code,
    ).toBe('PATH_NOT_WRITABLE');
    expect(exitCodeOf('DISK_FULL')).toBe(1);
  });

  it('leaves other system errors alone', () => {
    expect(productErrorOf(refused('ENOENT', 'open', '/srv/orders.csv'))).toBeUndefined();
    expect(productErrorOf(refused('EEXIST', 'open', '/srv/keys.json'))).toBeUndefined();
    expect(
      productErrorOf(Object.assign(new Error('listen EACCES'), { code: 'EACCES', syscall: 'listen' })),
    ).toBeUndefined();
  });
});

describe('exit codes', () => {
  it('maps each code to the exit code a cron monitor acts on', () => {
    expect(exitCodeOf('BAD_INPUT')).toBe(2);
    expect(exitCodeOf('SOURCE_UNREADABLE')).toBe(2);
    expect(exitCodeOf('PARTNER_RECORDS_UNREADABLE')).toBe(2);
    expect(exitCodeOf('STATEMENT_UNREADABLE')).toBe(2);
    expect(exitCodeOf('STATEMENT_HEADER_MISMATCH')).toBe(2);
    expect(exitCodeOf('SPOOL_NOT_FOUND')).toBe(2);
    expect(exitCodeOf('WAREHOUSE_NOT_DUCKDB')).toBe(2);
    expect(exitCodeOf('QUERY_REFUSED')).toBe(2);
    expect(exitCodeOf('WAREHOUSE_FAILED')).toBe(1);
    expect(exitCodeOf('WAREHOUSE_OUT_OF_MEMORY')).toBe(1);
    expect(exitCodeOf('REDIS_UNAVAILABLE')).toBe(1);
    expect(exitCodeOf('REPORT_FAILED')).toBe(1);
    expect(exitCodeOf('LISTEN_FAILED')).toBe(1);
    expect(exitCodeOf('LOOKUP_TIMEOUT')).toBe(1);
    expect(exitCodeOf('TOO_LARGE')).toBe(1);
    expect(exitCodeOf('WAREHOUSE_BUSY')).toBe(4);
    expect(exitCodeOf('JOURNAL_BUSY')).toBe(4);
    expect(exitCodeOf('PORT_IN_USE')).toBe(4);
    expect(exitCodeOf('JOB_LOCKED')).toBe(5);
  });

  it("gives each way a run can end the command line's exit code", () => {
    expect(RUN_EXIT_CODES).toEqual({
      ok: EXIT.OK,
      partial: EXIT.PARTIAL,
      failed: EXIT.FAILURE,
      bad_input: EXIT.BAD_INPUT,
      interrupted: EXIT.PARTIAL,
    });
    expect(Object.values(EXIT)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('advice', () => {
  const outOfMemory = (settings: ('batchSize' | 'memoryLimit')[]) =>
    new WarehouseOutOfMemoryError(LOADING_LOOKUPS, settings);

  it("names a command's flags", () => {
    expect(adviceFor(outOfMemory(['batchSize', 'memoryLimit']), 'command')).toBe(
      'lower --batch-size or raise --memory-limit',
    );
    expect(adviceFor(outOfMemory(['batchSize']), 'command')).toBe('lower --batch-size');
    expect(failureLine(new WarehouseOutOfMemoryError(LOADING_INPUTS, ['memoryLimit']), 'command')).toBe(
      `${LOADING_INPUTS}: raise --memory-limit`,
    );
  });

  it("names a job's configuration keys", () => {
    expect(adviceFor(outOfMemory(['batchSize', 'memoryLimit']), 'job')).toBe(
      'lower track.batchSize or raise track.memoryLimit in the configuration',
    );
    expect(adviceFor(outOfMemory(['batchSize']), 'job')).toBe('lower track.batchSize in the configuration');
    expect(failureLine(new WarehouseOutOfMemoryError(LOADING_INPUTS, ['memoryLimit']), 'job')).toBe(
      `${LOADING_INPUTS}: raise track.memoryLimit in the configuration`,
    );
  });

  it('says only that the limit is too small when no setting would help', () => {
    for (const wording of ['command', 'job'] as const)
      expect(adviceFor(outOfMemory([]), wording)).toBe('the memory limit is too small for it');
  });

  it('tells a busy warehouse to wait, read-only or not', () => {
    for (const wording of ['command', 'job'] as const) {
      expect(failureLine(new WarehouseBusyError('w.duckdb', 7), wording)).toBe(
        'warehouse w.duckdb is in use by another process (PID 7): one process writes the warehouse at a time; try again once that process has finished',
      );
      expect(failureLine(new WarehouseBusyError('w.duckdb', null, { readOnly: true }), wording)).toBe(
        'warehouse w.duckdb is in use by another process: DuckDB lets no other process open it, even read-only, while it is written; try again once that process has finished',
      );
    }
  });

  it('tells a refused query what a query on the warehouse may not do', () => {
    const refused = new UserError(
      'query refused: Permission Error: Cannot access file "keys.json" - file system operations are disabled by configuration',
      'QUERY_REFUSED',
    );
    expect(failureLine(refused, 'command')).toBe(
      `${refused.message}: a query on the warehouse reads no other file, writes none, loads no extension and changes no setting`,
    );
  });

  it('adds nothing where the message says it all', () => {
    const locked = new JobLockHeldError('nightly', HOLDER, 'Asia/Ho_Chi_Minh');
    expect(failureLine(locked, 'job')).toBe(
      'job nightly is already running (PID 4242 on night-host, since 2026-01-02T02:00:00+07:00)',
    );
    expect(failureLine(new SourceError('orders.csv is empty: no header line'), 'command')).toBe(
      'orders.csv is empty: no header line',
    );
  });

  it("takes DuckDB's own out-of-memory error for the warehouse's, which more memory helps", () => {
    const duckdb = new Error(
      'Out of Memory Error: failed to allocate data of size 4.0 MiB (42.9 MiB/45.7 MiB used)\nLINE 1: ...',
    );
    const failure = productErrorOf(duckdb);
    expect(failure).toBeInstanceOf(WarehouseOutOfMemoryError);
    expect(failure?.cause).toBe(duckdb);
    expect(failureLine(failure!, 'command')).toBe(
      'DuckDB ran out of memory (failed to allocate data of size 4.0 MiB (42.9 MiB/45.7 MiB used)): raise --memory-limit',
    );
    expect(failureLine(failure!, 'job')).toBe(
      'DuckDB ran out of memory (failed to allocate data of size 4.0 MiB (42.9 MiB/45.7 MiB used)): raise track.memoryLimit in the configuration',
    );
    expect(productErrorOf(new Error('something else'))).toBeUndefined();
    expect(productErrorOf('not an error')).toBeUndefined();
  });
});
