import { duckdbSource } from './duckdb-source.js';
import { mysqlSource } from './mysql-source.js';
import type { OrderCodeSource } from './order-code-source.js';
import { postgresSource } from './postgres-source.js';
import type { QueryTableSource } from './table-rows.js';

/** Order codes from the query a source names, on DuckDB, PostgreSQL or MySQL. */
export function queryOrderCodeSource(source: QueryTableSource): OrderCodeSource {
  switch (source.kind) {
    case 'duckdb':
      return duckdbSource(source.file, source.query);
    case 'postgres':
      return postgresSource(source.url, source.query);
    case 'mysql':
      return mysqlSource(source.url, source.query, { password: source.password });
  }
}
