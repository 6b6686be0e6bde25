import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DELAY_REASONS, ORDER_STATUSES } from '../../src/carriers/247express/contract.js';
import type { CarrierDefinition } from '../../src/carriers/carrier-definition.js';
import { KNOWN_CARRIERS } from '../../src/carriers/known-carriers.js';
import { applyMigrations, MIGRATIONS } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { isAccessRefusal, WarehouseBusyError, WarehouseError } from '../../src/warehouse/warehouse-errors.js';
import { rowsOf, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs({ makeEachWarehouse: true });
/** For the tests of a warehouse's use rather than its making: a copy of the run's new warehouse. */
const copied = useTempDirs();

describe('Warehouse.open', () => {
  it('creates the file and its directory, and applies every migration once', async () => {
    const { warehouse, path } = await temp.open();
    expect(existsSync(path)).toBe(true);
    const applied = await rowsOf(warehouse, 'SELECT version, name FROM schema_migrations ORDER BY version');
    expect(applied).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
  });

  it('applies nothing on a second open, nor when asked again', async () => {
    const { warehouse, path } = await temp.open();
    const firstApplied = await rowsOf(warehouse, 'SELECT version, applied_at FROM schema_migrations ORDER BY version');
    await warehouse.close();

    const reopened = await Warehouse.open(path);
    try {
      expect(await rowsOf(reopened, 'SELECT version, applied_at FROM schema_migrations ORDER BY version')).toEqual(
        firstApplied,
      );
      expect(await reopened.exclusive(() => applyMigrations(reopened.connection, path))).toEqual([]);
    } finally {
      await reopened.close();
    }
  });

  it('has every table of the schema', async () => {
    const { warehouse } = await temp.open();
    const tables = (
      await rowsOf(warehouse, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1")
    ).map((r) => r.table_name);
    expect(tables).toEqual([
      'bank_deposits',
      'callback_events',
      'callback_journal_segments',
      'cod_finding_mark_history',
      'cod_finding_marks',
      'delay_reasons',
      'delivery_failures',
      'lookup_results',
      'missed_callbacks',
      'neutral_statuses',
      'order_changes',
      'order_charge_audit',
      'order_charges',
      'order_image_lists',
      'order_images',
      'order_latest_callbacks',
      'order_status_timeline',
      'order_statuses',
      'order_trackings',
      'orders',
      'parcel_recon_warehouse',
      'payout_imports',
      'payout_line_fees',
      'payout_line_history',
      'payout_lines',
      'price_quote_lines',
      'price_quotes',
      'quota_limit_answers',
      'quota_usage',
      'run_inputs',
      'runs',
      'schema_migrations',
      'snapshot_partition_changes',
      'status_codes',
      'tracking_steps',
      'untracked_callbacks',
    ]);
  });

  it('keeps history tables without primary keys, and the rows written to them', async () => {
    const { warehouse } = await temp.open();
    await warehouse.run(`
      INSERT INTO order_charges VALUES ('247express', 'EX100000001', 1, 'DE', 'Chuyển phát nhanh', 1184800), ('247express', 'EX100000001', 2, 'Fuel', 'Phụ phí xăng dầu', 236960);
      INSERT INTO order_statuses VALUES ('247express', 'EX100000001', 1, '2026-11-01 08:00:00+07', '21', 'DATIEPNHAN', 'Đã tiếp nhận', 'Hà Nội', 'Bưu cục Cầu Giấy');
      INSERT INTO order_trackings VALUES ('247express', 'EX100000001', 1, '0', 'Nhập hệ thống', 'HN01', 'Bưu cục Cầu Giấy', '01', 'Hà Nội', '2026-11-01 08:00:00+07', NULL);`);
    expect(
      await rowsOf(
        warehouse,
        'SELECT order_code, line_no, service_id, CAST(cost AS VARCHAR) AS cost FROM order_charges ORDER BY line_no',
      ),
    ).toEqual([
      { order_code: 'EX100000001', line_no: 1, service_id: 'DE', cost: '1184800.0000' },
      { order_code: 'EX100000001', line_no: 2, service_id: 'Fuel', cost: '236960.0000' },
    ]);
    expect(await rowsOf(warehouse, 'SELECT province_name FROM order_statuses')).toEqual([{ province_name: 'Hà Nội' }]);
    expect(await rowsOf(warehouse, 'SELECT post_office_id FROM order_trackings')).toEqual([{ post_office_id: 'HN01' }]);
    const keyed = await rowsOf(
      warehouse,
      "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' AND table_name IN ('order_charges', 'order_statuses', 'order_trackings')",
    );
    expect(keyed).toEqual([]);
  });

  it('loads the reference data, and reloads it without duplicating on a second open', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.close();
    const reopened = await Warehouse.open(path);
    try {
      const counts = await rowsOf(
        reopened,
        'SELECT (SELECT count(*) FROM status_codes) AS statuses, (SELECT count(*) FROM delay_reasons) AS delays, (SELECT count(*) FROM tracking_steps) AS steps',
      );
      // Every known carrier's reference rows.
      const total = (count: (carrier: CarrierDefinition) => number) =>
        String(KNOWN_CARRIERS.map(count).reduce((a, b) => a + b));
      expect(counts).toEqual([
        {
          statuses: total((c) => c.statuses.length),
          delays: total((c) => c.delayReasons.length),
          steps: total((c) => c.trackingSteps.length),
        },
      ]);
      expect(ORDER_STATUSES).toHaveLength(11);
      expect(DELAY_REASONS).toHaveLength(31);
      const terminal = await rowsOf(
        reopened,
        "SELECT code FROM status_codes WHERE carrier = '247express' AND is_terminal ORDER BY code",
      );
      expect(terminal.map((r) => r.code)).toEqual(['18', '19', '28', '30', '32']);
      expect(
        await rowsOf(
          reopened,
          "SELECT carrier, name, display_name, neutral_status FROM status_codes WHERE code = '30'",
        ),
      ).toEqual([
        { carrier: '247express', name: 'PHATTHANHCONG', display_name: 'Phát thành công', neutral_status: 'delivered' },
      ]);
      expect(
        await rowsOf(
          reopened,
          'SELECT count(*) AS n FROM status_codes AS s JOIN neutral_statuses USING (neutral_status)',
        ),
      ).toEqual([{ n: total((c) => c.statuses.length) }]);
      expect(await rowsOf(reopened, 'SELECT count(*) AS n FROM neutral_statuses')).toEqual([{ n: '11' }]);
      expect(await rowsOf(reopened, "SELECT note FROM delay_reasons WHERE code = '13'")).toEqual([
        { note: 'Người nhận đi vắng' },
      ]);
    } finally {
      await reopened.close();
    }
  });

  it('writes nothing when the reference data is current, and puts back a reference row that differs', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.close();
    const before = await readFile(path);
    await (await Warehouse.open(path)).close();
    expect((await readFile(path)).equals(before)).toBe(true);

    const edited = await Warehouse.open(path);
    await edited.run("UPDATE status_codes SET display_name = 'sửa tay' WHERE carrier = '247express' AND code = '30'");
    await edited.run("DELETE FROM delay_reasons WHERE carrier = '247express' AND code = '13'");
    await edited.close();
    const reopened = await Warehouse.open(path);
    try {
      expect(
        await rowsOf(reopened, "SELECT display_name FROM status_codes WHERE carrier = '247express' AND code = '30'"),
      ).toEqual([{ display_name: 'Phát thành công' }]);
      expect(await rowsOf(reopened, "SELECT count(*) AS n FROM delay_reasons WHERE code = '13'")).toEqual([
        { n: String(KNOWN_CARRIERS.filter((c) => c.delayReasons.some((d) => d.code === '13')).length) },
      ]);
    } finally {
      await reopened.close();
    }
  });

  it('refuses a warehouse whose schema is newer than the program', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.run("INSERT INTO schema_migrations VALUES (999, 'from the future', current_timestamp)");
    await warehouse.close();
    const opening = Warehouse.open(path);
    await expect(opening).rejects.toThrow(WarehouseError);
    await expect(opening).rejects.toThrow(/has schema version 999, newer than this parcel-recon knows/);
  });

  it('opens read-only without writing, and refuses to write', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.close();
    const readOnly = await Warehouse.open(path, { readOnly: true });
    try {
      expect(readOnly.readOnly).toBe(true);
      expect(await rowsOf(readOnly, "SELECT count(*) AS n FROM status_codes WHERE carrier = '247express'")).toEqual([
        { n: '11' },
      ]);
      await expect(
        readOnly.run("INSERT INTO quota_usage VALUES ('247express', '2026-11-11', 'a', 1, current_timestamp)"),
      ).rejects.toThrow(/read-only/);
    } finally {
      await readOnly.close();
    }
  });

  it('fails with one line when a read-only warehouse does not exist, creating nothing', async () => {
    const dir = await temp.dir();
    const path = join(dir, 'missing', 'recon.duckdb');
    const error = await Warehouse.open(path, { readOnly: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WarehouseError);
    expect((error as Error).message).toBe(`warehouse ${path} does not exist (asked to open it read-only)`);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('refuses a second open of the same file in this process', async () => {
    const { path } = await temp.open();
    const error = await Warehouse.open(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WarehouseBusyError);
    expect((error as Error).message).toBe(`warehouse ${path} is in use by this process (PID ${process.pid})`);
  });

  it('fails with a one-line WarehouseError for a file that is not a warehouse', async () => {
    const path = join(await temp.dir(), 'notes.duckdb');
    await writeFile(
      path,
      'this is not a DuckDB file, just text that is long enough to be read as a header '.repeat(100),
    );
    const error = await Warehouse.open(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WarehouseError);
    expect((error as Error).message).toMatch(new RegExp(`^cannot open warehouse ${path.replaceAll('.', '\\.')}: `));
    expect((error as Error).message).not.toContain('\n');
    expect((error as WarehouseError).code).toBe('WAREHOUSE_NOT_DUCKDB');
  });

  it('refuses an existing file that DuckDB would open as data in memory, read-only or not, leaving it as it was', async () => {
    const dir = await temp.dir();
    for (const [name, text] of [
      ['wh.csv', 'order_code,account\nGHN0001,shop-a\n'],
      ['empty.csv', ''],
    ] as const) {
      const path = join(dir, name);
      await writeFile(path, text);
      for (const readOnly of [false, true]) {
        const error = await Warehouse.open(path, { readOnly }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WarehouseError);
        expect((error as WarehouseError).code).toBe('WAREHOUSE_NOT_DUCKDB');
        expect((error as Error).message).toBe(`cannot open warehouse ${path}: not a DuckDB database file`);
        expect(await readFile(path, 'utf8')).toBe(text);
      }
    }
  });

  it('creates a DuckDB file at a new path whatever its name', async () => {
    const { path } = await temp.open('recon.csv');
    expect((await readFile(path)).subarray(8, 12).toString()).toBe('DUCK');
  });
});

describe('a read-only open', () => {
  /** A warehouse opened read-only in a folder that also holds a keys file; `directories` are under that folder. */
  async function readOnlyOpen(directories: string[] = []) {
    const { warehouse, path, dir } = await copied.open();
    await warehouse.close();
    await writeFile(join(dir, 'keys.json'), '{"shop-a":"key-a"}');
    const allowed = directories.map((directory) => join(dir, directory));
    return { warehouse: await Warehouse.open(path, { readOnly: true, directories: allowed }), path, dir };
  }

  it('reads and writes no file but the warehouse, loads no extension and changes no setting', async () => {
    const { warehouse, path, dir } = await readOnlyOpen();
    try {
      for (const statement of [
        `COPY (SELECT 'x') TO '${path}'`,
        `COPY (SELECT 'x') TO '${join(dir, 'out.csv')}'`,
        `SELECT * FROM read_text('${join(dir, 'keys.json')}')`,
        'INSTALL httpfs',
        'LOAD httpfs',
        'SET enable_external_access = true',
        'SET lock_configuration = false',
        "SET memory_limit = '1GB'",
        `ATTACH '${join(dir, 'other.duckdb')}' AS other`,
      ]) {
        const error = await warehouse.run(statement).catch((e: unknown) => e);
        expect(isAccessRefusal(error), `${statement}: ${String(error)}`).toBe(true);
      }
      expect(await rowsOf(warehouse, "SELECT count(*) AS n FROM status_codes WHERE carrier = '247express'")).toEqual([
        { n: '11' },
      ]);
      expect(existsSync(join(dir, 'out.csv'))).toBe(false);
    } finally {
      await warehouse.close();
    }
  });

  it('gives another connection, in UTC as the first', async () => {
    const { warehouse } = await readOnlyOpen();
    try {
      const other = await warehouse.openSession();
      for (const connection of [warehouse, other]) {
        const zone = await connection.readAll("SELECT current_setting('TimeZone') AS zone");
        expect(zone.getRowObjectsJson()).toEqual([{ zone: 'UTC' }]);
      }
    } finally {
      await warehouse.close();
    }
  });

  it('given directories, writes there and nowhere else, and keeps its settings changeable', async () => {
    const { warehouse, dir } = await readOnlyOpen(['out']);
    const out = join(dir, 'out');
    try {
      await mkdir(out);
      await warehouse.run(`COPY (SELECT 1 AS n) TO '${join(out, 'n.parquet')}' (FORMAT parquet)`);
      await warehouse.run('SET preserve_insertion_order = false');
      for (const statement of [
        `COPY (SELECT 1 AS n) TO '${out}-next.parquet' (FORMAT parquet)`,
        `COPY (SELECT 1 AS n) TO '${join(out, '..', 'up.parquet')}' (FORMAT parquet)`,
        `SELECT * FROM read_text('${join(dir, 'keys.json')}')`,
        'SET enable_external_access = true',
      ]) {
        const error = await warehouse.run(statement).catch((e: unknown) => e);
        expect(error, statement).toBeInstanceOf(Error);
      }
      expect(existsSync(join(out, 'n.parquet'))).toBe(true);
      expect(existsSync(`${out}-next.parquet`)).toBe(false);
    } finally {
      await warehouse.close();
    }
  });
});

describe('Warehouse.open while another process holds the file', () => {
  let holder: ChildProcess | undefined;
  afterEach(() => {
    holder?.kill();
    holder = undefined;
  });

  it('fails with WarehouseBusyError naming the file and the PID, in one line', async () => {
    const { warehouse, path } = await copied.open();
    await warehouse.close();
    holder = await holdInAnotherProcess(path);

    const error = await Warehouse.open(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WarehouseBusyError);
    const busy = error as WarehouseBusyError;
    expect(busy.message).toBe(`warehouse ${path} is in use by another process (PID ${holder.pid})`);
    expect(busy.pid).toBe(holder.pid);
    expect(busy.code).toBe('WAREHOUSE_BUSY');

    await expect(Warehouse.open(path, { readOnly: true })).rejects.toThrow(WarehouseBusyError);
  });
});

describe('Warehouse.transaction', () => {
  it('commits what the work did', async () => {
    const { warehouse } = await copied.open();
    await warehouse.transaction(async (sql) => {
      await sql.run("INSERT INTO quota_usage VALUES ('247express', '2026-11-11', 'a', 1, current_timestamp)");
    });
    expect(await rowsOf(warehouse, 'SELECT lookups FROM quota_usage')).toEqual([{ lookups: '1' }]);
  });

  it('rolls back everything when the work throws, and the connection goes on', async () => {
    const { warehouse } = await copied.open();
    const failing = warehouse.transaction(async (sql) => {
      await sql.run("INSERT INTO quota_usage VALUES ('247express', '2026-11-11', 'a', 1, current_timestamp)");
      throw new Error('work failed');
    });
    await expect(failing).rejects.toThrow('work failed');
    expect(await rowsOf(warehouse, 'SELECT count(*) AS n FROM quota_usage')).toEqual([{ n: '0' }]);
  });

  it('queues concurrent work: a statement issued during a transaction waits for its end', async () => {
    const { warehouse } = await copied.open();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inTransaction = warehouse.transaction(async (sql) => {
      await sql.run("INSERT INTO quota_usage VALUES ('247express', '2026-11-11', 'a', 1, current_timestamp)");
      seen.push('inserted');
      await gate;
      throw new Error('rolled back');
    });
    const outside = warehouse.readAll('SELECT count(*) AS n FROM quota_usage').then((r) => {
      seen.push(`read ${String(r.getRowObjectsJson()[0]?.n)}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await expect(inTransaction).rejects.toThrow('rolled back');
    await outside;
    // The read neither ran inside the transaction nor saw its row.
    expect(seen).toEqual(['inserted', 'read 0']);
  });

  it('lets a second session write while the main one holds a transaction, and closes it with the warehouse', async () => {
    const { warehouse, path } = await copied.open();
    const session = await warehouse.openSession();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = warehouse.transaction(async (sql) => {
      await sql.run("INSERT INTO quota_usage VALUES ('247express', '2026-11-11', 'main', 1, current_timestamp)");
      await gate;
    });
    // The session's write does not wait for the main connection's transaction.
    await session.run("INSERT INTO quota_usage VALUES ('247express', '2026-11-11', 'session', 2, current_timestamp)");
    release();
    await held;
    expect(await rowsOf(warehouse, 'SELECT key_alias, lookups FROM quota_usage ORDER BY key_alias')).toEqual([
      { key_alias: 'main', lookups: '1' },
      { key_alias: 'session', lookups: '2' },
    ]);
    await warehouse.close();
    await expect(session.run('SELECT 1')).rejects.toThrow(`warehouse ${path} is closed`);
  });

  it('refuses work after close', async () => {
    const { warehouse, path } = await copied.open();
    await warehouse.close();
    await warehouse.close();
    await expect(warehouse.run('SELECT 1')).rejects.toThrow(`warehouse ${path} is closed`);
  });
});

describe('Warehouse.withSettings', () => {
  const TUNING_QUERY =
    "SELECT current_setting('threads') AS threads, current_setting('memory_limit') AS memory_limit, current_setting('checkpoint_threshold') AS checkpoint_threshold";

  it('runs the work with the given engine settings, then puts back the ones the warehouse was opened with', async () => {
    const { warehouse } = await copied.open('tuned.duckdb', {
      memoryLimit: '256MB',
      threads: 2,
      checkpointThreshold: '64MB',
    });
    const opened = await rowsOf(warehouse, TUNING_QUERY);
    const during = await warehouse.withSettings({ memoryLimit: '128MB', threads: 1, checkpointThreshold: '32MB' }, () =>
      rowsOf(warehouse, TUNING_QUERY),
    );
    expect(during).toEqual([{ threads: '1', memory_limit: '122.0 MiB', checkpoint_threshold: '30.5 MiB' }]);
    expect(opened).toEqual([{ threads: '2', memory_limit: '244.1 MiB', checkpoint_threshold: '61.0 MiB' }]);
    expect(await rowsOf(warehouse, TUNING_QUERY)).toEqual(opened);
  });

  it('puts them back when the work fails, and changes only the settings given', async () => {
    const { warehouse } = await copied.open('tuned-failing.duckdb', {
      memoryLimit: '256MB',
      threads: 2,
      checkpointThreshold: '64MB',
    });
    const opened = await rowsOf(warehouse, TUNING_QUERY);
    let during: unknown;
    await expect(
      warehouse.withSettings({ threads: 1 }, async () => {
        during = await rowsOf(warehouse, TUNING_QUERY);
        throw new Error('the step failed');
      }),
    ).rejects.toThrow('the step failed');
    expect(during).toEqual([{ ...opened[0], threads: '1' }]);
    expect(await rowsOf(warehouse, TUNING_QUERY)).toEqual(opened);
  });
});

/** A child process that opens `path` with DuckDB and keeps it open until killed. */
async function holdInAnotherProcess(path: string): Promise<ChildProcess> {
  const script = `
    const { DuckDBInstance } = require('@duckdb/node-api');
    DuckDBInstance.create(process.argv[1]).then(() => { process.stdout.write('ready\\n'); setInterval(() => {}, 60000); });`;
  const child = spawn(process.execPath, ['-e', script, path], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the holding process exited early (code ${code})`)));
  });
  return child;
}
