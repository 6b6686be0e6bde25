import { UserError } from '../errors/user-error.js';
import { passwordFreeUrl } from './password-free-url.js';

/** The whole URL of `--from-postgres` given without one, its password included. */
export const POSTGRES_URL_ENV = 'PARCEL_RECON_POSTGRES_URL';

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
