import { UserError } from '../errors/user-error.js';
import type { QueryTableSource } from '../sources/table-rows.js';
import { mysqlConnection } from './mysql-source-config.js';
import { postgresUrl } from './postgres-source-config.js';

/** The flags that name a query on a database, as `track`, `price` and `report reconcile` take them. */
export interface QuerySourceFlags {
  readonly fromDuckdb?: string | undefined;
  readonly fromPostgres?: string | true | undefined;
  readonly fromMysql?: string | true | undefined;
  readonly mysqlPasswordFile?: string | undefined;
  readonly query?: string | undefined;
}

/** How many of the query flags are given. */
export function querySourcesGiven(flags: QuerySourceFlags): number {
  return [flags.fromDuckdb, flags.fromPostgres, flags.fromMysql].filter((flag) => flag !== undefined).length;
}

/**
 * The query source the flags name (at most one of --from-duckdb, --from-postgres, --from-mysql),
 * or undefined; `returning` says in messages what --query must return. The URLs hold no password:
 * PostgreSQL's comes from PGPASSWORD or ~/.pgpass, MySQL's from --mysql-password-file or MYSQL_PWD,
 * or the whole URL from the environment.
 */
export async function querySourceOf(
  flags: QuerySourceFlags,
  env: NodeJS.ProcessEnv,
  returning: string,
): Promise<QueryTableSource | undefined> {
  if (flags.mysqlPasswordFile !== undefined && flags.fromMysql === undefined)
    throw new UserError('--mysql-password-file is the password of --from-mysql, which is not given');
  const flag =
    flags.fromDuckdb !== undefined
      ? '--from-duckdb'
      : flags.fromPostgres !== undefined
        ? '--from-postgres'
        : flags.fromMysql !== undefined
          ? '--from-mysql'
          : undefined;
  if (flag === undefined) return undefined;
  const query = flags.query;
  if (query === undefined) throw new UserError(`${flag} needs --query SQL returning ${returning}`);
  if (flags.fromDuckdb !== undefined) return { kind: 'duckdb', file: flags.fromDuckdb, query };
  if (flags.fromPostgres !== undefined) return { kind: 'postgres', url: postgresUrl(flags.fromPostgres, env), query };
  const { url, password } = await mysqlConnection(flags.fromMysql!, flags.mysqlPasswordFile, env);
  return { kind: 'mysql', url, query, password };
}
