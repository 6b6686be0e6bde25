import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBResultReader, DuckDBValue } from '@duckdb/node-api';
import { type DiskFault, diskFaultOf } from '../errors/disk-fault.js';
import { confineConnection } from './duckdb-confinement.js';
import { isDuckDbFile } from './duckdb-file.js';
import { DuckDBInstance } from './duckdb-library.js';
import { applyMigrations, requireCurrentSchema } from './migrations.js';
import { loadReferenceData } from './reference-data-loader.js';
import { sqlText } from './sql-literals.js';
import {
  firstLineOf,
  isOutOfMemory,
  lockHolderPid,
  type MemorySetting,
  WarehouseBusyError,
  WarehouseError,
  WarehouseOutOfMemoryError,
} from './warehouse-errors.js';

export interface WarehouseOptions {
  /**
   * Open without writing: no migrations, no reference data reload; the file must exist. DuckDB then
   * reads and writes no other file (but in `directories`, and `files`) and installs or loads no extension.
   */
  readonly readOnly?: boolean;
  /**
   * The directories a read-only open may read and write in besides the warehouse: a report's files.
   * An open given none also has its settings locked, so that no query can lift the confinement; one
   * given some runs only the program's own queries, which change settings as they go.
   */
  readonly directories?: readonly string[];
  /** The files a read-only open may read besides the warehouse: a report's partner records. */
  readonly files?: readonly string[];
  /** A read-only open that takes a file at an older schema as it is: to read which migrations are pending. */
  readonly olderSchema?: boolean;
  /** Where DuckDB spills past its memory limit; a read-only open has no spill directory unless given one. */
  readonly tempDirectory?: string;
  /** DuckDB's memory_limit; past it DuckDB spills to `<file>.tmp`. */
  readonly memoryLimit?: string;
  readonly threads?: number;
  /** WAL size that triggers a checkpoint (DuckDB's checkpoint_threshold). */
  readonly checkpointThreshold?: string;
}

/**
 * A checkpoint rewrites the tables' open row groups and their indexes: at DuckDB's default threshold
 * (16MB) they come every few batches and cost more than the loads themselves, hence a higher one.
 */
export const DEFAULT_WAREHOUSE_OPTIONS = { memoryLimit: '512MB', threads: 2, checkpointThreshold: '256MB' } as const;

/** The engine settings a warehouse is opened with, and that `withSettings` changes for a while. */
export type WarehouseTuning = Pick<WarehouseOptions, 'memoryLimit' | 'threads' | 'checkpointThreshold'>;

/** DuckDB's name of each tuning setting. */
const TUNING_SETTINGS = {
  memoryLimit: 'memory_limit',
  threads: 'threads',
  checkpointThreshold: 'checkpoint_threshold',
} as const;

export type SqlParameters = DuckDBValue[] | Record<string, DuckDBValue>;

/** Runs statements on one connection: a warehouse's connection, or the inside of one of its transactions. */
export interface SqlRunner {
  /** Runs a statement (or several, without parameters); returns the number of rows it changed. */
  run(sql: string, parameters?: SqlParameters): Promise<number>;
  /** Runs a query and reads its whole result. */
  readAll(sql: string, parameters?: SqlParameters): Promise<DuckDBResultReader>;
}

/** The connection itself, as the work of `exclusive` or `transaction` gets it: no queue. */
function directRunner(connection: DuckDBConnection): SqlRunner {
  return {
    run: async (sql, parameters) => (await connection.run(sql, parameters)).rowsChanged,
    readAll: (sql, parameters) => connection.runAndReadAll(sql, parameters),
  };
}

/**
 * One DuckDB connection and the queue in front of it. DuckDB transactions belong to a connection and
 * the pipeline works concurrently, so every use goes through the queue: `exclusive`, `transaction`,
 * `run` and `readAll` wait for the work ahead of them; the work of `exclusive` and `transaction` gets
 * the connection to itself through the runner it is handed.
 */
export class WarehouseSession implements SqlRunner {
  private queue: Promise<unknown> = Promise.resolve();
  protected closed = false;
  private readonly loadRetryListeners = new Set<(what: string) => void>();

  constructor(
    /** The warehouse's path as given, for messages. */
    readonly path: string,
    readonly connection: DuckDBConnection,
    /**
     * The first disk fault any connection to the file met, shared by them all: DuckDB keeps the index
     * entries of a commit the disk refused, and a later commit then aborts the process, so nothing more
     * runs on the file once one is met.
     */
    protected readonly stopped: { fault?: DiskFault } = {},
  ) {}

  /** Runs `work` with the connection to itself, after the work queued before it. */
  exclusive<T>(work: (sql: SqlRunner) => Promise<T>): Promise<T> {
    return this.queued(work, { afterDiskFault: false });
  }

  /** Queues `work`; only closing runs after a disk fault. */
  protected queued<T>(work: (sql: SqlRunner) => Promise<T>, options: { afterDiskFault: boolean }): Promise<T> {
    const result = this.queue.then(async () => {
      if (this.closed) throw new WarehouseError(`warehouse ${this.path} is closed`);
      if (this.stopped.fault !== undefined && !options.afterDiskFault) throw this.stopped.fault;
      try {
        return await work(directRunner(this.connection));
      } catch (error) {
        this.stopped.fault ??= diskFaultOf(error);
        throw error;
      }
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Runs `work` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(work: (sql: SqlRunner) => Promise<T>): Promise<T> {
    return this.exclusive(async (sql) => {
      await this.connection.run('BEGIN TRANSACTION');
      try {
        const result = await work(sql);
        await this.connection.run('COMMIT');
        return result;
      } catch (error) {
        // A failed COMMIT has already rolled back; then ROLLBACK fails too, and the first error is the one to report.
        await this.connection.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /**
   * A transaction that bulk-loads (spool files, temporary tables, many rows), which DuckDB may not fit
   * in its memory limit beside the committed rows it holds in memory until a checkpoint: when DuckDB
   * runs out of memory, the work is rolled back, the warehouse checkpointed, and the work run once
   * more. `work` must touch nothing but the database. A second shortage is a WarehouseOutOfMemoryError
   * that names the memory limit, what was loading (`what`) and the settings that would make it fit.
   */
  async loadTransaction<T>(
    work: (sql: SqlRunner) => Promise<T>,
    what: string,
    settings: readonly MemorySetting[] = [],
  ): Promise<T> {
    try {
      return await this.transaction(work);
    } catch (error) {
      if (!isOutOfMemory(error)) throw error;
    }
    for (const listener of this.loadRetryListeners) listener(what);
    // Refused while another connection's transaction is open (the quota ledger's are brief): the retry then tells.
    await this.run('CHECKPOINT').catch(() => undefined);
    try {
      return await this.transaction(work);
    } catch (error) {
      if (!isOutOfMemory(error)) throw error;
      const limit = await this.memoryLimit();
      throw new WarehouseOutOfMemoryError(
        `DuckDB ran out of memory (memory_limit ${limit}) loading ${what}, even after a checkpoint`,
        settings,
        { cause: error },
      );
    }
  }

  /** Calls `listener` with what was loading each time loadTransaction checkpoints to retry; returns its removal. */
  onLoadRetry(listener: (what: string) => void): () => void {
    this.loadRetryListeners.add(listener);
    return () => this.loadRetryListeners.delete(listener);
  }

  private async memoryLimit(): Promise<string> {
    const reader = await this.readAll("SELECT current_setting('memory_limit') AS memory_limit");
    return String(reader.getRowObjectsJS()[0]?.memory_limit);
  }

  run(sql: string, parameters?: SqlParameters): Promise<number> {
    return this.exclusive((runner) => runner.run(sql, parameters));
  }

  readAll(sql: string, parameters?: SqlParameters): Promise<DuckDBResultReader> {
    return this.exclusive((runner) => runner.readAll(sql, parameters));
  }

  /** Closes the connection once the queued work is done. */
  closeSession(): Promise<void> {
    return this.queued(
      async () => {
        this.closed = true;
        this.connection.closeSync();
      },
      { afterDiskFault: true },
    );
  }
}

/** DuckDB's name of an in-memory database, and the path it stands under among the open ones: never a file's. */
const IN_MEMORY = ':memory:';

/**
 * The DuckDB warehouse file and its main connection. `openSession` gives another connection to the same
 * file with its own queue, so short writes (the quota ledger) need not wait behind a batch load.
 */
export class Warehouse extends WarehouseSession {
  /** Absolute paths open in this process: DuckDB's file lock is per process, so it would let a second open through. */
  private static readonly openPaths = new Set<string>();

  private readonly otherConnections = new Set<WarehouseSession>();
  private closing: Promise<void> | undefined;

  private constructor(
    path: string,
    private readonly absolutePath: string,
    private readonly instance: DuckDBInstance,
    connection: DuckDBConnection,
    readonly readOnly: boolean,
    private readonly tuning: Required<WarehouseTuning>,
    /** The schema versions this open applied (a writable open of a file at an older schema). */
    readonly migrationsApplied: readonly number[] = [],
  ) {
    super(path, connection);
  }

  /**
   * Runs `work` with DuckDB's memory limit, threads or checkpoint threshold changed (those `settings`
   * gives), then puts back the ones the warehouse was opened with, whatever happened: one step of a
   * job can run as its own command would.
   */
  async withSettings<T>(settings: WarehouseTuning, work: () => Promise<T>): Promise<T> {
    const names = (Object.keys(TUNING_SETTINGS) as (keyof WarehouseTuning)[]).filter(
      (name) => settings[name] !== undefined,
    );
    const apply = async (values: WarehouseTuning) => {
      for (const name of names) await this.run(`SET ${TUNING_SETTINGS[name]} = ${sqlText(String(values[name]))}`);
    };
    await apply(settings);
    try {
      return await work();
    } finally {
      await apply(this.tuning);
    }
  }

  /**
   * Opens (creating it and its directory when writable) the warehouse file. A writable open applies
   * pending migrations and reloads the reference data. Fails with WarehouseBusyError when another
   * process holds the file, WarehouseError when it cannot be opened.
   */
  static async open(path: string, options: WarehouseOptions = {}): Promise<Warehouse> {
    const readOnly = options.readOnly ?? false;
    const absolutePath = resolve(path);
    if (Warehouse.openPaths.has(absolutePath))
      throw new WarehouseBusyError(path, process.pid, { holder: 'this process', readOnly });
    if (readOnly && !existsSync(absolutePath))
      throw new WarehouseError(`warehouse ${path} does not exist (asked to open it read-only)`);
    Warehouse.openPaths.add(absolutePath);
    try {
      await refuseOtherThanDuckDb(path, absolutePath);
      if (!readOnly) await mkdir(dirname(absolutePath), { recursive: true });
      const instance = await createInstance(path, absolutePath, readOnly, options);
      const connection = await instance.connect();
      let migrationsApplied: number[] = [];
      try {
        // Text and date casts of TIMESTAMPTZ follow the time zone; make them not depend on the machine's, for
        // every connection to the file, before a read-only open locks the settings.
        await connection.run("SET GLOBAL TimeZone = 'UTC'");
        if (readOnly) {
          if (!options.olderSchema) await requireCurrentSchema(connection, path);
          await confineConnection(connection, options.directories ?? [], options.files ?? []);
        } else {
          migrationsApplied = await applyMigrations(connection, path, absolutePath);
          await loadReferenceData(connection);
        }
      } catch (error) {
        connection.closeSync();
        instance.closeSync();
        throw error;
      }
      return new Warehouse(path, absolutePath, instance, connection, readOnly, tuningOf(options), migrationsApplied);
    } catch (error) {
      Warehouse.openPaths.delete(absolutePath);
      throw error;
    }
  }

  /**
   * An in-memory database confined as a read-only open is: it reads and writes no file but in
   * `options.directories`, where the files it reads are (a Parquet snapshot of the warehouse). Given
   * directories, its settings stay unlocked: the caller locks them once it has made what it reads through.
   */
  static async openInMemory(label: string, options: WarehouseOptions = {}): Promise<Warehouse> {
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(IN_MEMORY, instanceConfig(options));
    } catch (error) {
      throw new WarehouseError(`cannot open ${label}: ${firstLineOf(error)}`, { cause: error });
    }
    const connection = await instance.connect();
    try {
      await connection.run("SET GLOBAL TimeZone = 'UTC'");
      await confineConnection(connection, options.directories ?? [], options.files ?? []);
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      throw error;
    }
    return new Warehouse(label, IN_MEMORY, instance, connection, true, tuningOf(options));
  }

  /** Another connection to the warehouse, with its own queue; closed with the warehouse. */
  async openSession(): Promise<WarehouseSession> {
    const connection = await this.instance.connect();
    const other = new WarehouseSession(this.path, connection, this.stopped);
    this.otherConnections.add(other);
    return other;
  }

  /** Interrupts the statement running on every connection (it fails): for a process that gives up at once. */
  interrupt(): void {
    this.connection.interrupt();
    for (const other of this.otherConnections) other.connection.interrupt();
  }

  /** Closes the other connections, the main one and the file once the queued work is done. Closing twice is harmless. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const other of this.otherConnections) await other.closeSession();
      await this.queued(
        async () => {
          this.closed = true;
          this.connection.closeSync();
          this.instance.closeSync();
          Warehouse.openPaths.delete(this.absolutePath);
        },
        { afterDiskFault: true },
      );
    })();
    return this.closing;
  }
}

/** An existing file at the warehouse's path must be a DuckDB database; DuckDB would open anything else in memory. */
async function refuseOtherThanDuckDb(path: string, absolutePath: string): Promise<void> {
  try {
    const found = await stat(absolutePath).catch(() => undefined);
    if (found === undefined || !found.isFile() || (await isDuckDbFile(absolutePath))) return;
  } catch (error) {
    throw new WarehouseError(`cannot open warehouse ${path}: ${firstLineOf(error)}`, { cause: error });
  }
  throw new WarehouseError(
    `cannot open warehouse ${path}: not a DuckDB database file`,
    undefined,
    'WAREHOUSE_NOT_DUCKDB',
  );
}

function tuningOf(options: WarehouseOptions): Required<WarehouseTuning> {
  return {
    memoryLimit: options.memoryLimit ?? DEFAULT_WAREHOUSE_OPTIONS.memoryLimit,
    threads: options.threads ?? DEFAULT_WAREHOUSE_OPTIONS.threads,
    checkpointThreshold: options.checkpointThreshold ?? DEFAULT_WAREHOUSE_OPTIONS.checkpointThreshold,
  };
}

function instanceConfig(options: WarehouseOptions): Record<string, string> {
  const tuning = tuningOf(options);
  return {
    memory_limit: tuning.memoryLimit,
    threads: String(tuning.threads),
    checkpoint_threshold: tuning.checkpointThreshold,
    ...(options.tempDirectory === undefined ? {} : { temp_directory: options.tempDirectory }),
  };
}

async function createInstance(
  path: string,
  absolutePath: string,
  readOnly: boolean,
  options: WarehouseOptions,
): Promise<DuckDBInstance> {
  const config = { ...instanceConfig(options), access_mode: readOnly ? 'READ_ONLY' : 'READ_WRITE' };
  try {
    return await DuckDBInstance.create(absolutePath, config);
  } catch (error) {
    const pid = lockHolderPid(error);
    if (pid !== undefined) throw new WarehouseBusyError(path, pid, { cause: error, readOnly });
    throw new WarehouseError(`cannot open warehouse ${path}: ${firstLineOf(error)}`, { cause: error });
  }
}
