/**
 * The values of DuckDB's Node API, loaded with `require`. The package is CommonJS: an ES `import` of
 * it makes Node scan each of its modules for the names it exports, which costs every command about a
 * seventh of its start; `require` skips that scan. Types come from the package itself (`import type`).
 */
import { createRequire } from 'node:module';
import type * as DuckDB from '@duckdb/node-api';

const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;

export const { DuckDBDecimalType, DuckDBInstance, DuckDBTypeId, JsonDuckDBValueConverter, StatementType } = duckdb;
export type DuckDBDecimalType = DuckDB.DuckDBDecimalType;
export type DuckDBInstance = DuckDB.DuckDBInstance;
export type DuckDBTypeId = DuckDB.DuckDBTypeId;
export type StatementType = DuckDB.StatementType;
