import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { csvTimeSeconds, fileOf, parquetTimeSql, readJsonRows, sandboxNow } from './report-fixtures.js';

interface TrackedOrder {
  order_code: string;
  status: string;
  display_name: string;
  total: string;
  cod: string;
}

type Files = { table: string; path: string; rows: number }[];

describe('report reconcile and the report files', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let orders: TrackedOrder[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 20 });
    workspace = await trackingWorkspace();
    const rows: string[][] = [['order_code', 'account']];
    for (const account of sandbox.state.world.accounts)
      for (let i = 0; i < 20; i++) rows.push([sandbox.state.world.orderCode(account.index, i), account.alias]);
    // EX200000020 asked with another account's key: ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT; EX100000099 does not exist.
    rows.splice(
      rows.findIndex((r) => r[0] === 'EX200000020'),
      1,
      ['EX200000020', 'hanoi-shop'],
    );
    rows.push(['EX100000099', 'hanoi-shop']);
    await workspace.track(sandbox, [await workspace.writeCsv('orders.csv', rows)]);
    orders = await workspace.query<TrackedOrder>(
      `SELECT o.order_code, o.status, s.display_name, CAST(o.total_service_cost AS VARCHAR) AS total, CAST(o.cod_amount AS VARCHAR) AS cod
       FROM orders o JOIN status_codes s ON s.code = o.status ORDER BY o.order_code`,
    );
  });

  afterAll(async () => {
    await sandbox?.stop();
    await workspace?.dispose();
  });

  /** The partner's records: every tracked order but two, with one planted disagreement of each kind. */
  function partnerLines(): { lines: string[][]; expected: string[] } {
    expect(orders.length).toBe(59);
    const [missing1, missing2, statusWrong, invoiceWrong, codWrong, duplicated, badLine, byName, withinTolerance] =
      orders;
    const lines: string[][] = [];
    for (const o of orders) {
      if (o === missing1 || o === missing2) continue;
      const line = [o.order_code, o.status, o.total, o.cod];
      if (o === statusWrong) line[1] = o.status === '19' ? '32' : '19';
      if (o === invoiceWrong) line[2] = String(Number(o.total) + 5000);
      if (o === codWrong) line[3] = String(Number(o.cod) + 1000);
      if (o === badLine) line[2] = 'about 30k';
      if (o === byName) line[1] = o.display_name;
      if (o === withinTolerance) line[2] = String(Number(o.total) + 1);
      lines.push(line);
      if (o === duplicated) lines.push([...line]);
    }
    lines.push(['EX100000099', '', '', ''], ['EX200000020', '30', '', ''], ['EX300000777', '', '52000', '']);
    const expected = [
      `bad_partner_line ${badLine!.order_code}`,
      'unknown_to_carrier EX100000099',
      'unknown_to_carrier EX200000020',
      'unknown_to_carrier EX300000777',
      `missing_from_partner ${missing1!.order_code}`,
      `missing_from_partner ${missing2!.order_code}`,
      `duplicate_line ${duplicated!.order_code}`,
      `status_mismatch ${statusWrong!.order_code}`,
      `invoice_mismatch ${invoiceWrong!.order_code}`,
      `cod_mismatch ${codWrong!.order_code}`,
    ];
    return { lines, expected: expected.sort() };
  }

  async function reconcile(args: string[], name: string): Promise<Record<string, unknown>[]> {
    const out = join(workspace.dir, name);
    const result = await cli(
      ['report', 'reconcile', '--db', workspace.dbPath, '--format', 'json', '--out', out, '--json', ...args],
      sandboxNow(sandbox),
    );
    expect(result.code, result.stderr).toBe(0);
    const files = (JSON.parse(result.stdout) as { files: Files }).files;
    return readJsonRows(fileOf(files, 'reconcile').path);
  }

  it('lists each planted disagreement exactly once, from a CSV', async () => {
    const { lines, expected } = partnerLines();
    const csv = join(workspace.dir, 'partner.csv');
    await writeFile(
      csv,
      `\uFEFForder_code;expected_status;invoiced_amount;cod_amount\r\n${lines.map((l) => l.join(';')).join('\r\n')}\r\n`,
    );
    const findings = await reconcile(['--partner', csv], 'reconcile-csv');
    expect(findings.map((f) => `${String(f.finding)} ${String(f.order_code)}`).sort()).toEqual(expected);
    const invoice = findings.find((f) => f.finding === 'invoice_mismatch')!;
    expect(Number(invoice.difference)).toBe(5000);
    expect(String(findings.find((f) => f.finding === 'duplicate_line')!.partner_lines)).toMatch(
      /partner\.csv:\d+, .*partner\.csv:\d+/,
    );
  });

  it('reads the same records from a DuckDB query', async () => {
    const { lines, expected } = partnerLines();
    const file = join(workspace.dir, 'erp.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    await connection.run('CREATE TABLE invoices (code VARCHAR, state VARCHAR, amount VARCHAR, cod DECIMAL(18,2))');
    for (const [code, status, amount, cod] of lines) {
      await connection.run('INSERT INTO invoices VALUES ($1, $2, $3, TRY_CAST($4 AS DECIMAL(18,2)))', [
        code!,
        status || null,
        amount || null,
        cod ?? null,
      ]);
    }
    connection.closeSync();
    instance.closeSync();
    const query =
      'SELECT code AS order_code, state AS expected_status, amount AS invoiced_amount, cod AS cod_amount FROM invoices';
    const findings = await reconcile(['--from-duckdb', file, '--query', query], 'reconcile-duckdb');
    expect(findings.map((f) => `${String(f.finding)} ${String(f.order_code)}`).sort()).toEqual(expected);
  });

  it('charges --invoices flags the order invoiced differently, and --flagged-only writes the flagged orders only', async () => {
    const { lines, expected } = partnerLines();
    const csv = join(workspace.dir, 'invoices.csv');
    await writeFile(
      csv,
      `order_code,expected_status,invoiced_amount,cod_amount\n${lines.map((l) => l.join(',')).join('\n')}\n`,
    );
    const result = await cli(
      [
        'report',
        'charges',
        '--db',
        workspace.dbPath,
        '--invoices',
        csv,
        '--format',
        'json',
        '--out',
        join(workspace.dir, 'invoices'),
        '--json',
      ],
      sandboxNow(sandbox),
    );
    expect(result.code, result.stderr).toBe(0);
    const files = (JSON.parse(result.stdout) as { files: Files }).files;
    const rows = await readJsonRows(files.find((f) => f.table === 'charges')!.path);
    const invoiceWrong = expected.find((e) => e.startsWith('invoice_mismatch'))!.split(' ')[1];
    expect(rows.filter((r) => r.invoice_flag === true).map((r) => r.order_code)).toEqual([invoiceWrong]);
    expect(rows.find((r) => r.order_code === invoiceWrong)).toMatchObject({ invoice_difference: -5000 });

    const flaggedOnly = await cli(
      [
        'report',
        'charges',
        '--db',
        workspace.dbPath,
        '--flagged-only',
        '--format',
        'json',
        '--out',
        join(workspace.dir, 'flagged'),
        '--json',
      ],
      sandboxNow(sandbox),
    );
    const flaggedFiles = (JSON.parse(flaggedOnly.stdout) as { files: Files }).files;
    const flagged = await readJsonRows(flaggedFiles.find((f) => f.table === 'charges')!.path);
    expect(flagged.every((r) => Number(r.flags_failed) > 0)).toBe(true);
    const summary = await readJsonRows(flaggedFiles.find((f) => f.table === 'charges-summary')!.path);
    expect(summary.find((r) => r.check_name === 'any' && r.account_alias === '*')).toMatchObject({
      orders_checked: 59,
      orders_flagged: flagged.length,
    });
  });

  it('refuses partner records without an order_code column in one line, exit 2', async () => {
    const csv = join(workspace.dir, 'no-code.csv');
    await writeFile(csv, 'code,amount\nEX100000001,1000\n');
    const result = await cli(
      ['report', 'reconcile', '--db', workspace.dbPath, '--partner', csv, '--out', join(workspace.dir, 'x')],
      {},
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('no order_code column');
  });

  it('writes CSV as UTF-8 with a BOM and a header, Vietnamese intact, and Parquet that reads back with the same rows', async () => {
    const run = async (format: string) => {
      const result = await cli(
        [
          'report',
          'failures',
          '--db',
          workspace.dbPath,
          '--format',
          format,
          '--out',
          join(workspace.dir, format),
          '--json',
        ],
        sandboxNow(sandbox),
      );
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { files: Files }).files;
    };
    const csvFiles = await run('csv');
    const parquetFiles = await run('parquet');
    expect(csvFiles.map((f) => f.path)).toContain(
      join(workspace.dir, 'csv', `failures_${csvFiles[0]!.path.match(/failures_(.+)\.csv$/)![1]}.csv`),
    );

    const csvPath = csvFiles.find((f) => f.table === 'failures')!.path;
    const bytes = await readFile(csvPath);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const records = parse(bytes, { bom: true, columns: true }) as Record<string, string>[];
    expect(records.length).toBeGreaterThan(0);
    const withNote = records.filter((r) => r.delay_note !== '');
    expect(withNote.length).toBeGreaterThan(0);
    const notes = await workspace.query<{ code: string; note: string }>('SELECT code, note FROM delay_reasons');
    for (const record of withNote)
      expect(record.delay_note).toBe(notes.find((n) => n.code === record.delay_code)!.note);
    expect(withNote.some((r) => /[^\p{ASCII}]/u.test(r.delay_note!))).toBe(true);

    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run("SET TimeZone = 'UTC'");
      for (const table of ['failures', 'failures-by-reason', 'failures-awaiting']) {
        const parquet = parquetFiles.find((f) => f.table === table)!;
        const csv = csvFiles.find((f) => f.table === table)!;
        expect(parquet.rows).toBe(csv.rows);
        // Parquet keeps instants, the CSV shows them in the display time zone with their offset: both as epoch seconds.
        const columns = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${parquet.path}')`))
          .getRowObjectsJS()
          .map((c) => ({ name: String(c.column_name), time: c.column_type === 'TIMESTAMP WITH TIME ZONE' }));
        const select = columns.map(({ name, time }) => (time ? parquetTimeSql(name) : `"${name}"::VARCHAR`)).join(', ');
        const fromParquet = (await connection.runAndReadAll(`SELECT ${select} FROM read_parquet('${parquet.path}')`))
          .getRows()
          .map((r) => r.map((v) => v ?? ''));
        const fromCsv = (parse(await readFile(csv.path), { bom: true }) as string[][])
          .slice(1)
          .map((r) => r.map((v, i) => (columns[i]!.time ? csvTimeSeconds(v) : v)));
        expect(fromParquet).toEqual(fromCsv);
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
