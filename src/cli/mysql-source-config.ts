import { UserError } from '../errors/user-error.js';
import { SETTINGS } from '../settings/catalog.js';
import { readPrivateFile } from './api-keys-config.js';
import { passwordFreeUrl } from './password-free-url.js';

const MYSQL_URL_ENV = SETTINGS.mysqlUrl.env;
const MYSQL_PASSWORD_ENV = SETTINGS.mysqlPassword.env;

/** Where `--from-mysql` connects, and the password when the URL holds none. */
export interface MysqlConnection {
  readonly url: string;
  readonly password: string | undefined;
}

/**
 * The URL of `--from-mysql` and its password. A URL given on the command line (or in a configuration)
 * holds no password: it comes from `--mysql-password-file` (mode 600), else MYSQL_PWD; without a URL
 * the whole URL is PARCEL_RECON_MYSQL_URL's, and a password it holds wins.
 */
export async function mysqlConnection(
  flag: string | true,
  passwordFile: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<MysqlConnection> {
  const url = flag === true ? mysqlUrlFromEnv(env) : mysqlUrlWithoutPassword(flag);
  if (passwordFile !== undefined) return { url, password: await readPasswordFile(passwordFile) };
  const fromEnv = env[MYSQL_PASSWORD_ENV];
  return { url, password: fromEnv === undefined || fromEnv === '' ? undefined : fromEnv };
}

function mysqlUrlWithoutPassword(flag: string): string {
  return passwordFreeUrl(
    flag,
    '--from-mysql',
    'mysql://user@host:port/db',
    `${MYSQL_PASSWORD_ENV} or --mysql-password-file FILE, or the whole URL in ${MYSQL_URL_ENV}`,
  );
}

function mysqlUrlFromEnv(env: NodeJS.ProcessEnv): string {
  const url = env[MYSQL_URL_ENV];
  if (url === undefined || url === '') throw new UserError(`--from-mysql without a URL needs ${MYSQL_URL_ENV}`);
  return url;
}

/** The file's text up to its first line break: the password, which is never shown. */
async function readPasswordFile(path: string): Promise<string> {
  const password = (await readPrivateFile(path, 'MySQL password file')).split(/\r?\n/)[0] ?? '';
  if (password === '') throw new UserError(`MySQL password file ${path} holds no password on its first line`);
  return password;
}
