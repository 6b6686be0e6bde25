import { UserError } from '../errors/user-error.js';
import { SETTINGS } from '../settings/catalog.js';
import { passwordFreeUrl } from './password-free-url.js';

const POSTGRES_URL_ENV = SETTINGS.postgresUrl.env;

/** A PostgreSQL URL without a password: passwords come from PGPASSWORD, ~/.pgpass or the environment. */
export function postgresUrl(flag: string | true, env: NodeJS.ProcessEnv): string {
  if (flag !== true)
    return passwordFreeUrl(
      flag,
      '--from-postgres',
      'postgres://user@host:port/db',
      `PGPASSWORD or ~/.pgpass, or the whole URL in ${POSTGRES_URL_ENV}`,
    );
  const fromEnv = env[POSTGRES_URL_ENV];
  if (fromEnv === undefined || fromEnv === '')
    throw new UserError(`--from-postgres without a URL needs ${POSTGRES_URL_ENV}`);
  return fromEnv;
}
