/**
 * `report reconcile --from-mysql` (and `charges --from-mysql`) against a real MariaDB server, run as
 * a user runs it: the partner's records come from a query, streamed through the MySQL source, and give
 * the same findings as the same records in a CSV; the password comes from MYSQL_PWD, a private file or
 * the environment's URL and shows nowhere.
 */
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli } from '../support/cli-process.js';
import { type MariadbServer, startMariadb } from '../support/mariadb-server.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { allOrdersCsv, fileOf, readJsonRows, sandboxNow } from './report-fixtures.js';

const ORDERS_PER_ACCOUNT = 8;
const QUERY =
  'SELECT code AS order_code, state AS expected_status, amount AS invoiced_amount, cod AS cod_amount FROM invoices ORDER BY id';

interface TrackedOrder {
  order_code: string;
  status: string;
  total: string;
  cod: string;
}

describe('parcel-recon report reconcile --from-mysql', () => {
  let sandbox: RunningSandbox;
  let server: MariadbServer;
  let workspace: TrackingWorkspace;
  /** The partner's lines: code, status, amount, cod (null where the partner left it blank). */
  let lines: (string | null)[][];
  let expected: string[];

  beforeAll(async () => {
    [sandbox, server, workspace] = await Promise.all([
      startTestSandbox({ ordersPerAccount: ORDERS_PER_ACCOUNT }),
      startMariadb(),
      trackingWorkspace(),
    ]);
    await workspace.track(sandbox, [await allOrdersCsv(sandbox, workspace)]);
    const orders = await workspace.query<TrackedOrder>(
      `SELECT order_code, status, CAST(total_service_cost AS VARCHAR) AS total, CAST(cod_amount AS VARCHAR) AS cod
       FROM orders ORDER BY order_code`,
    );
    const [missing, statusWrong, invoiceWrong, duplicated, badLine] = orders;
    lines = [];
    for (const o of orders) {
      if (o === missing) continue;
      const line: (string | null)[] = [o.order_code, o.status, o.total, o.cod];
      if (o === statusWrong) line[1] = o.status === '19' ? '32' : '19';
      if (o === invoiceWrong) line[2] = String(Number(o.total) + 5000);
      if (o === badLine) line[2] = 'about 30k';
      lines.push(line);
      if (o === duplicated) lines.push([...line]);
    }
    lines.push(['EX300000777', null, '52000', null]);
    expected = [
      `bad_partner_line ${badLine!.order_code}`,
      'unknown_to_carrier EX300000777',
      `missing_from_partner ${missing!.order_code}`,
      `duplicate_line ${duplicated!.order_code}`,
      `status_mismatch ${statusWrong!.order_code}`,
      `invoice_mismatch ${invoiceWrong!.order_code}`,
    ].sort();
    const admin = await server.connect();
    try {
      await admin.query(
        'CREATE TABLE invoices (id INT AUTO_INCREMENT PRIMARY KEY, code VARCHAR(40), state VARCHAR(40), amount VARCHAR(40), cod DECIMAL(18,2))',
      );
      await admin.query('INSERT INTO invoices (code, state, amount, cod) VALUES ?', [lines]);
    } finally {
      await admin.end();
    }
  }, 180_000);

  afterAll(async () => {
    await sandbox?.stop();
    await server?.stop();
    await workspace?.dispose();
  });

  async function reconcile(args: string[], name: string, env: Record<string, string>): Promise<CliResult> {
    return cli(
      [
        'report',
        'reconcile',
        '--db',
        workspace.dbPath,
        '--format',
        'json',
        '--out',
        join(workspace.dir, name),
        '--json',
        ...args,
      ],
      { ...sandboxNow(sandbox), ...env },
    );
  }

  async function findingsOf(result: CliResult): Promise<Record<string, unknown>[]> {
    expect(result.code, result.stderr).toBe(0);
    const files = (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files;
    return readJsonRows(fileOf(files, 'reconcile').path);
  }

  const named = (findings: Record<string, unknown>[]) =>
    findings.map((f) => `${String(f.finding)} ${String(f.order_code)}`).sort();

  /** Exit 2 in one line on stderr, no stack trace, no password. */
  function refusedInOneLine(result: CliResult): string {
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain(server.password);
    const printed = result.stderr.trimEnd().split('\n');
    expect(printed, result.stderr).toHaveLength(1);
    return printed[0]!;
  }

  it('finds each planted disagreement in the rows of a MySQL query, as in the same CSV, the password from MYSQL_PWD shown nowhere', async () => {
    const result = await reconcile(['--from-mysql', server.url, '--query', QUERY], 'from-mysql', {
      MYSQL_PWD: server.password,
    });
    const findings = await findingsOf(result);
    expect(named(findings)).toEqual(expected);
    expect(findings.find((f) => f.finding === 'duplicate_line')!.partner_lines).toMatch(
      /^mysql row \d+, mysql row \d+$/,
    );
    expect(Number(findings.find((f) => f.finding === 'invoice_mismatch')!.difference)).toBe(5000);

    const csv = join(workspace.dir, 'partner.csv');
    const text = lines.map((line) => line.map((value) => value ?? '').join(',')).join('\n');
    await writeFile(csv, `order_code,expected_status,invoiced_amount,cod_amount\n${text}\n`);
    const fromCsv = await findingsOf(await reconcile(['--partner', csv], 'from-csv', {}));
    const withoutOrigin = (rows: Record<string, unknown>[]) => rows.map(({ partner_lines: _, ...rest }) => rest);
    expect(withoutOrigin(findings)).toEqual(withoutOrigin(fromCsv));

    const outputs = [result.stdout, result.stderr];
    for (const file of await readdir(join(workspace.dir, 'from-mysql')))
      outputs.push(await readFile(join(workspace.dir, 'from-mysql', file), 'utf8'));
    for (const output of outputs) expect(output).not.toContain(server.password);
  });

  it('takes the password from a file of mode 600 or the whole URL from PARCEL_RECON_MYSQL_URL, and refuses one on the command line', async () => {
    const passwordFile = join(workspace.dir, 'mysql-password');
    await writeFile(passwordFile, `${server.password}\n`, { mode: 0o600 });
    await chmod(passwordFile, 0o600);
    const fromFile = await reconcile(
      ['--from-mysql', server.url, '--mysql-password-file', passwordFile, '--query', QUERY],
      'from-file',
      {},
    );
    expect(named(await findingsOf(fromFile))).toEqual(expected);

    const withPassword = new URL(server.url);
    withPassword.password = server.password;
    const fromEnv = await reconcile(['--from-mysql', '--query', QUERY], 'from-env', {
      PARCEL_RECON_MYSQL_URL: withPassword.toString(),
    });
    expect(named(await findingsOf(fromEnv))).toEqual(expected);

    const onCommandLine = await reconcile(['--from-mysql', withPassword.toString(), '--query', QUERY], 'refused', {});
    expect(refusedInOneLine(onCommandLine)).toContain('--from-mysql: the URL holds a password');
  });

  it('names a failing query, a query without order_code and a wrong password in one line, exit 2', async () => {
    const env = { MYSQL_PWD: server.password };
    const failing = await reconcile(['--from-mysql', server.url, '--query', 'SELECT * FROM no_such_table'], 'f1', env);
    expect(refusedInOneLine(failing)).toMatch(/MySQL query failed: .*no_such_table/);

    const noCode = await reconcile(['--from-mysql', server.url, '--query', 'SELECT code FROM invoices'], 'f2', env);
    expect(refusedInOneLine(noCode)).toContain('the MySQL query has no order_code column; its columns are code');

    const wrong = await reconcile(['--from-mysql', server.url, '--query', QUERY], 'f3', {
      MYSQL_PWD: `${server.password}-wrong`,
    });
    expect(refusedInOneLine(wrong)).toMatch(/cannot connect to MySQL at recon@127\.0\.0\.1:\d+\/shop: Access denied/);
    expect(wrong.stderr).not.toContain(`${server.password}-wrong`);
  });
  it('charges --from-mysql compares the totals with the invoices of a query as with --invoices of the same CSV', async () => {
    const invoiceFlags = async (args: string[], name: string, env: Record<string, string>) => {
      const out = join(workspace.dir, name);
      const result = await cli(
        ['report', 'charges', '--db', workspace.dbPath, '--format', 'json', '--out', out, '--json', ...args],
        { ...sandboxNow(sandbox), ...env },
      );
      expect(result.code, result.stderr).toBe(0);
      const files = (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files;
      const rows = await readJsonRows(fileOf(files, 'charges').path);
      return rows.map((r) => [r.order_code, r.invoiced_amount, r.invoice_flag]).sort();
    };
    const fromMysql = await invoiceFlags(['--from-mysql', server.url, '--query', QUERY], 'charges-mysql', {
      MYSQL_PWD: server.password,
    });
    expect(fromMysql.filter(([, , flag]) => flag === true)).toHaveLength(1);
    const csv = join(workspace.dir, 'invoices.csv');
    const text = lines.map((line) => line.map((value) => value ?? '').join(',')).join('\n');
    await writeFile(csv, `order_code,expected_status,invoiced_amount,cod_amount\n${text}\n`);
    expect(await invoiceFlags(['--invoices', csv], 'charges-csv', {})).toEqual(fromMysql);
  });
});
