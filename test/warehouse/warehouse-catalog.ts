import type { SqlRunner } from '../../src/warehouse/warehouse.js';

/**
 * What a warehouse's schema is, as DuckDB's catalog describes it (views' columns included), in a
 * stable order so two warehouses compare as JSON. Object ids and sizes are left out: they depend on
 * the order of creation, not on the schema. Runs of whitespace in a view's SQL fold to one space, and
 * lists are joined into text so the reference file is already in the formatter's layout.
 */
export interface WarehouseCatalog {
  readonly tables: readonly Record<string, unknown>[];
  readonly columns: readonly Record<string, unknown>[];
  readonly constraints: readonly Record<string, unknown>[];
  readonly indexes: readonly Record<string, unknown>[];
  readonly views: readonly Record<string, unknown>[];
  readonly sequences: readonly Record<string, unknown>[];
  readonly macros: readonly Record<string, unknown>[];
  /** Rows of each table a new warehouse starts with, but for the schema version's own rows. */
  readonly rowCounts: Readonly<Record<string, number>>;
}

const MAIN = "database_name = current_database() AND schema_name = 'main'";

const CATALOG_QUERIES = {
  tables: `SELECT table_name, has_primary_key, column_count, index_count, check_constraint_count, sql
    FROM duckdb_tables() WHERE ${MAIN} AND NOT temporary ORDER BY table_name`,
  columns: `SELECT table_name, column_index, column_name, data_type, is_nullable, column_default
    FROM duckdb_columns() WHERE ${MAIN} AND NOT internal ORDER BY table_name, column_index`,
  constraints: `SELECT table_name, constraint_type, array_to_string(constraint_column_names, ', ') AS column_names, constraint_text, expression, constraint_name
    FROM duckdb_constraints() WHERE ${MAIN}
    ORDER BY table_name, constraint_type, column_names, constraint_text`,
  indexes: `SELECT table_name, index_name, is_unique, is_primary, expressions, sql
    FROM duckdb_indexes() WHERE ${MAIN} ORDER BY table_name, index_name`,
  views: `SELECT view_name, column_count, trim(regexp_replace(sql, '\\s+', ' ', 'g')) AS sql
    FROM duckdb_views() WHERE ${MAIN} AND NOT internal AND NOT temporary ORDER BY view_name`,
  sequences: `SELECT sequence_name, start_value, min_value, max_value, increment_by, cycle, sql
    FROM duckdb_sequences() WHERE ${MAIN} AND NOT temporary ORDER BY sequence_name`,
  macros: `SELECT function_name, function_type, array_to_string(parameters, ', ') AS parameters, macro_definition
    FROM duckdb_functions() WHERE ${MAIN} AND NOT internal AND function_type IN ('macro', 'table_macro')
    ORDER BY function_name, parameters`,
} as const;

/** The schema's own bookkeeping: its rows say which migrations ran, not what the schema is. */
const SCHEMA_VERSION_TABLE = 'schema_migrations';

export async function readWarehouseCatalog(sql: SqlRunner): Promise<WarehouseCatalog> {
  const read = async (query: string) => (await sql.readAll(query)).getRowObjectsJson() as Record<string, unknown>[];
  const sections = {} as Record<keyof typeof CATALOG_QUERIES, Record<string, unknown>[]>;
  for (const [section, query] of Object.entries(CATALOG_QUERIES)) {
    sections[section as keyof typeof CATALOG_QUERIES] = await read(query);
  }
  const rowCounts: Record<string, number> = {};
  for (const { table_name } of sections.tables) {
    const table = String(table_name);
    if (table === SCHEMA_VERSION_TABLE) continue;
    const [row] = await read(`SELECT count(*) AS n FROM "${table}"`);
    rowCounts[table] = Number(row?.n);
  }
  return { ...sections, rowCounts };
}
