import { resolve, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlText } from './sql-literals.js';

/**
 * Leaves a read-only connection no file but its database, `directories` and `files`, and no extension
 * to install or load. DuckDB takes the allowed paths only while external access is on, and the lock
 * last; each directory ends with a separator, as DuckDB allows every path that starts with it.
 */
export async function confineConnection(
  connection: DuckDBConnection,
  directories: readonly string[],
  files: readonly string[] = [],
): Promise<void> {
  await connection.run('SET autoinstall_known_extensions = false');
  await connection.run('SET autoload_known_extensions = false');
  await connection.run('SET allow_community_extensions = false');
  if (directories.length > 0) {
    const allowed = directories.map((directory) => sqlText(resolve(directory) + sep));
    await connection.run(`SET allowed_directories = [${allowed.join(', ')}]`);
  }
  if (files.length > 0)
    await connection.run(`SET allowed_paths = [${files.map((file) => sqlText(resolve(file))).join(', ')}]`);
  await connection.run('SET enable_external_access = false');
  if (directories.length === 0 && files.length === 0) await connection.run('SET lock_configuration = true');
}
