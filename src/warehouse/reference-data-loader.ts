import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { DELAY_REASONS, ORDER_STATUSES, TRACKING_STEPS } from '../carriers/247express/contract.js';

interface ReferenceTable {
  readonly table: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly DuckDBValue[])[];
}

const REFERENCE_TABLES: readonly ReferenceTable[] = [
  {
    table: 'status_codes',
    columns: ['code', 'name', 'display_name', 'meaning', 'is_terminal'],
    rows: ORDER_STATUSES.map((s) => [s.code, s.name, s.displayName, s.meaning, s.terminal]),
  },
  {
    table: 'delay_reasons',
    columns: ['code', 'meaning', 'note'],
    rows: DELAY_REASONS.map((d) => [d.code, d.meaning, d.note]),
  },
  {
    table: 'tracking_steps',
    columns: ['code', 'name', 'display_name'],
    rows: TRACKING_STEPS.map((s) => [s.code, s.name, s.displayName]),
  },
];

/**
 * Replaces the reference tables with the contract's reference data, in one transaction, so the
 * warehouse always carries the tables of the program that last wrote it. One statement per table.
 */
export async function loadReferenceData(connection: DuckDBConnection): Promise<void> {
  await connection.run('BEGIN TRANSACTION');
  try {
    for (const { table, columns, rows } of REFERENCE_TABLES) {
      await connection.run(`DELETE FROM ${table}`);
      const tuples = rows.map(
        (_, row) => `(${columns.map((__, column) => `$${row * columns.length + column + 1}`).join(', ')})`,
      );
      await connection.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, rows.flat());
    }
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
