import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlConnection } from '../../src/cli/mysql-source-config.js';
import { UserError } from '../../src/errors/user-error.js';
import { jobSettingsFrom } from '../support/job-settings.js';

const URL_WITHOUT_PASSWORD = 'mysql://shop@db.internal:3306/orders';
const PASSWORD = 'Db-Secret-913';
const ENV = {
  PARCEL_RECON_API_KEYS: 'default=ak-0f3b9d27-6c41-4e8a-b5d2-7a1e9c3f0b64',
  PARCEL_RECON_TRACKING_URL: 'http://127.0.0.1:9',
};
const logger = pino({ level: 'silent' });

/** The UserError a promise rejects with; its message must not show the password. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UserError);
  const message = (error as UserError).message;
  expect(message).not.toContain(PASSWORD);
  expect(message.split('\n')).toHaveLength(1);
  return message;
}

describe('the URL and password of --from-mysql', () => {
  let dir: string;
  let privateFile: string;
  let sharedFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mysql-source-config-'));
    privateFile = join(dir, 'private');
    await writeFile(privateFile, `${PASSWORD}\nanything after the first line\n`, { mode: 0o600 });
    sharedFile = join(dir, 'shared');
    await writeFile(sharedFile, `${PASSWORD}\n`, { mode: 0o640 });
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('takes the password from the file of mode 600 before MYSQL_PWD, else from MYSQL_PWD, else none', async () => {
    expect(await mysqlConnection(URL_WITHOUT_PASSWORD, privateFile, { MYSQL_PWD: 'other' })).toEqual({
      url: URL_WITHOUT_PASSWORD,
      password: PASSWORD,
    });
    expect(await mysqlConnection(URL_WITHOUT_PASSWORD, undefined, { MYSQL_PWD: PASSWORD })).toEqual({
      url: URL_WITHOUT_PASSWORD,
      password: PASSWORD,
    });
    expect(await mysqlConnection(URL_WITHOUT_PASSWORD, undefined, {})).toEqual({
      url: URL_WITHOUT_PASSWORD,
      password: undefined,
    });
  });

  it('refuses a password file other users can read, or one without a password, in one line', async () => {
    expect(await refusal(mysqlConnection(URL_WITHOUT_PASSWORD, sharedFile, {}))).toBe(
      `MySQL password file ${sharedFile} can be read by other users (mode 640): run chmod 600 ${sharedFile}`,
    );
    const empty = join(dir, 'empty');
    await writeFile(empty, '\n', { mode: 0o600 });
    expect(await refusal(mysqlConnection(URL_WITHOUT_PASSWORD, empty, {}))).toBe(
      `MySQL password file ${empty} holds no password on its first line`,
    );
  });

  it('refuses a URL holding a password without repeating it, and takes the whole URL from PARCEL_RECON_MYSQL_URL', async () => {
    expect(await refusal(mysqlConnection(`mysql://shop:${PASSWORD}@db.internal/orders`, undefined, {}))).toBe(
      '--from-mysql: the URL holds a password; give it in MYSQL_PWD or --mysql-password-file FILE, or the whole URL in PARCEL_RECON_MYSQL_URL',
    );
    expect(await refusal(mysqlConnection('db.internal', undefined, {}))).toBe(
      '--from-mysql: not a URL (mysql://user@host:port/db)',
    );
    const whole = `mysql://shop:${PASSWORD}@db.internal/orders`;
    expect(await mysqlConnection(true, undefined, { PARCEL_RECON_MYSQL_URL: whole })).toEqual({
      url: whole,
      password: undefined,
    });
    expect(await refusal(mysqlConnection(true, undefined, {}))).toBe(
      '--from-mysql without a URL needs PARCEL_RECON_MYSQL_URL',
    );
  });

  it("is a job's source as source.fromMysql with source.mysqlPasswordFile", async () => {
    const settings = (source: Record<string, unknown>) => jobSettingsFrom({ source }, ENV, logger).tracking();
    const { sources } = await settings({
      fromMysql: URL_WITHOUT_PASSWORD,
      mysqlPasswordFile: privateFile,
      query: 'SELECT code AS order_code FROM shipments',
    });
    expect(sources.map((source) => source.description)).toEqual([
      'mysql:shop@db.internal:3306/orders: SELECT code AS order_code FROM shipments',
    ]);
    expect(
      await refusal(settings({ fromMysql: URL_WITHOUT_PASSWORD, mysqlPasswordFile: sharedFile, query: 'SELECT 1' })),
    ).toContain('can be read by other users');
    expect(await refusal(settings({ fromMysql: URL_WITHOUT_PASSWORD }))).toBe(
      '--from-mysql needs --query SQL returning order_code (and optionally account)',
    );
    expect(await refusal(settings({ mysqlPasswordFile: privateFile, inputs: ['orders.csv'] }))).toBe(
      '--mysql-password-file is the password of --from-mysql, which is not given',
    );
  });
});
