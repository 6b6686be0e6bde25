import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv } from '../support/cli-process.js';
import { type MariadbServer, startMariadb } from '../support/mariadb-server.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const ORDERS_PER_ACCOUNT = 12;
const QUERY = 'SELECT code AS order_code, account FROM shipments ORDER BY id';

describe('parcel-recon track --from-mysql', () => {
  let sandbox: RunningSandbox;
  let server: MariadbServer;
  let workspace: TrackingWorkspace;
  let env: Record<string, string>;
  /** Codes the query returns: the sandbox's orders and one the carrier's rules reject. */
  let codes: number;

  beforeAll(async () => {
    [sandbox, server, workspace] = await Promise.all([
      startTestSandbox({ ordersPerAccount: ORDERS_PER_ACCOUNT }),
      startMariadb(),
      trackingWorkspace(),
    ]);
    env = sandboxEnv(sandbox);
    const rows = sandbox.state.world.accounts.flatMap((account) =>
      Array.from({ length: ORDERS_PER_ACCOUNT }, (_, i) => [
        sandbox.state.world.orderCode(account.index, i),
        account.alias,
      ]),
    );
    rows.push(['EX1', sandbox.state.world.accounts[0]!.alias]);
    codes = rows.length;
    const admin = await server.connect();
    try {
      await admin.query(
        'CREATE TABLE shipments (id INT AUTO_INCREMENT PRIMARY KEY, code VARCHAR(40), account VARCHAR(64))',
      );
      await admin.query('INSERT INTO shipments (code, account) VALUES ?', [rows]);
    } finally {
      await admin.end();
    }
  });

  afterAll(async () => {
    await sandbox?.stop();
    await server?.stop();
    await workspace?.dispose();
  });

  /** Every text the run left: its output, its files and the warehouse's runs and inputs. */
  async function textsOf(result: CliResult): Promise<string[]> {
    const texts = [result.stdout, result.stderr];
    const files = await readdir(workspace.dir, { recursive: true, withFileTypes: true });
    for (const file of files.filter((entry) => entry.isFile() && !entry.name.endsWith('.gz')))
      texts.push((await readFile(join(file.parentPath, file.name))).toString('latin1'));
    texts.push(JSON.stringify(await workspace.query('SELECT * FROM runs')));
    return texts;
  }

  /** Exit 2, no stack trace, the password nowhere; the lines on stderr. */
  function badInput(result: CliResult): string[] {
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain(server.password);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    return result.stderr.trimEnd().split('\n');
  }

  /** A refusal before anything starts: one line on stderr. */
  function refusedInOneLine(result: CliResult): string {
    const lines = badInput(result);
    expect(lines, result.stderr).toHaveLength(1);
    return lines[0]!;
  }

  /** A source that fails once the run has started (its log line first): the run's last line names the problem. */
  function sourceFailure(result: CliResult): string {
    const lines = badInput(result);
    expect(lines.map((line) => (JSON.parse(line.startsWith('{') ? line : '{}') as { msg?: string }).msg)).toEqual([
      'run started',
      undefined,
    ]);
    return lines.at(-1)!;
  }

  it('tracks the codes of a query, the password from MYSQL_PWD shown nowhere', async () => {
    const result = await cli(
      ['track', '--from-mysql', server.url, '--query', QUERY, '--db', workspace.dbPath, '--json', '--no-progress'],
      { ...env, MYSQL_PWD: server.password },
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      counters: { ok: number };
      codes: { read: number; rejected: number };
    };
    expect(summary.codes).toMatchObject({ read: codes, rejected: 1 });
    expect(summary.counters.ok).toBe(codes - 1);
    expect(await workspace.query('SELECT origin, reject_code FROM run_inputs WHERE reject_code IS NOT NULL')).toEqual([
      { origin: `mysql row ${codes}`, reject_code: 'ORDERCODE_MIN_LENGTH' },
    ]);
    for (const text of await textsOf(result)) expect(text.includes(server.password)).toBe(false);
  });

  it('takes the password from a file of mode 600, and refuses one other users can read in one line', async () => {
    const passwordFile = join(workspace.dir, 'mysql-password');
    await writeFile(passwordFile, `${server.password}\n`, { mode: 0o644 });
    const args = ['track', '--plan', '--from-mysql', server.url, '--mysql-password-file', passwordFile];
    const refused = refusedInOneLine(await cli([...args, '--query', QUERY, '--db', workspace.dbPath], env));
    expect(refused).toContain(`MySQL password file ${passwordFile} can be read by other users (mode 644)`);

    await chmod(passwordFile, 0o600);
    const planned = await cli([...args, '--query', QUERY, '--db', workspace.dbPath, '--json'], env);
    expect(planned.code, planned.stderr).toBe(0);
    expect(JSON.parse(planned.stdout)).toMatchObject({ codes: { read: codes, rejected: 1 } });
  });

  it('takes the whole URL from PARCEL_RECON_MYSQL_URL, and refuses a password on the command line', async () => {
    const withPassword = new URL(server.url);
    withPassword.password = server.password;
    const planned = await cli(['track', '--plan', '--from-mysql', '--query', QUERY, '--db', workspace.dbPath], {
      ...env,
      PARCEL_RECON_MYSQL_URL: withPassword.toString(),
    });
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain(`codes read ${codes}, rejected 1`);

    const refused = refusedInOneLine(
      await cli(['track', '--plan', '--from-mysql', withPassword.toString(), '--query', QUERY], env),
    );
    expect(refused).toContain('the URL holds a password; give it in MYSQL_PWD or --mysql-password-file FILE');
  });

  it.each([
    ['a wrong password', (url: string) => ({ url, password: 'not-the-Secret-42' }), "Access denied for user 'recon'"],
    [
      'no server',
      (url: string) => ({ url: url.replace(/:\d+\//, ':1/'), password: 'not-the-Secret-42' }),
      'connect ECONNREFUSED 127.0.0.1:1',
    ],
  ])('fails to connect with %s in one line, exit 2, with nothing spent', async (_name, target, expected) => {
    const { url, password } = target(server.url);
    const before = JSON.stringify(sandbox.state.quota.usage());
    const result = await cli(['track', '--from-mysql', url, '--query', QUERY, '--db', workspace.dbPath], {
      ...env,
      MYSQL_PWD: password,
    });
    const line = sourceFailure(result);
    expect(line).toMatch(/^parcel-recon: cannot connect to MySQL at recon@127\.0\.0\.1:\d+\/shop: /);
    expect(line).toContain(expected);
    expect(line).not.toContain(password);
    expect(JSON.stringify(sandbox.state.quota.usage())).toBe(before);
  });

  it('names the missing order_code column and a wrong query in one line, exit 2', async () => {
    const run = (query: string) =>
      cli(['track', '--from-mysql', server.url, '--query', query, '--db', workspace.dbPath], {
        ...env,
        MYSQL_PWD: server.password,
      });
    expect(sourceFailure(await run('SELECT code FROM shipments'))).toBe(
      'parcel-recon: the MySQL query has no order_code column; its columns are "code"',
    );
    expect(sourceFailure(await run('SELECT code AS order_code FROM nowhere'))).toBe(
      "parcel-recon: MySQL query failed: Table 'shop.nowhere' doesn't exist",
    );
  });
});
