import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { NEUTRAL_STATUS_MEANINGS } from '../carriers/neutral-status.js';

interface ReferenceTable {
  readonly table: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly DuckDBValue[])[];
}

/** Each known carrier's statuses (with the neutral status each is), delay reasons and handling steps, and the neutral statuses. */
const REFERENCE_TABLES: readonly ReferenceTable[] = [
  {
    table: 'status_codes',
    columns: ['carrier', 'code', 'name', 'display_name', 'meaning', 'is_terminal', 'neutral_status'],
    rows: KNOWN_CARRIERS.flatMap((carrier) =>
      carrier.statuses.map((s) => [carrier.id, s.code, s.name, s.displayName, s.meaning, s.terminal, s.neutral]),
    ),
  },
  {
    table: 'delay_reasons',
    columns: ['carrier', 'code', 'meaning', 'note'],
    rows: KNOWN_CARRIERS.flatMap((carrier) => carrier.delayReasons.map((d) => [carrier.id, d.code, d.meaning, d.note])),
  },
  {
    table: 'tracking_steps',
    columns: ['carrier', 'code', 'name', 'display_name'],
    rows: KNOWN_CARRIERS.flatMap((carrier) =>
      carrier.trackingSteps.map((s) => [carrier.id, s.code, s.name, s.displayName]),
    ),
  },
  {
    table: 'neutral_statuses',
    columns: ['neutral_status', 'meaning'],
    rows: Object.entries(NEUTRAL_STATUS_MEANINGS),
  },
];

/** Rows as JSON text in one order, to compare a table's rows with the known ones whatever order it keeps them in. */
function rowsText(rows: readonly (readonly unknown[])[]): string {
  return JSON.stringify(rows.map((row) => JSON.stringify(row)).sort());
}

const KNOWN_ROWS = new Map(REFERENCE_TABLES.map(({ table, rows }) => [table, rowsText(rows)]));

/** Whether every reference table already holds exactly the known carriers' rows. */
async function referenceDataCurrent(connection: DuckDBConnection): Promise<boolean> {
  for (const { table, columns } of REFERENCE_TABLES) {
    const stored = (await connection.runAndReadAll(`SELECT ${columns.join(', ')} FROM ${table}`)).getRowsJson();
    if (rowsText(stored) !== KNOWN_ROWS.get(table)) return false;
  }
  return true;
}

/**
 * Replaces the reference tables with the known carriers' reference data, in one transaction, so the
 * warehouse always carries the tables of the program that last wrote it. One statement per table.
 * A warehouse that already holds them is not written: most opens change nothing, and a write would
 * cost a checkpoint at close.
 */
export async function loadReferenceData(connection: DuckDBConnection): Promise<void> {
  if (await referenceDataCurrent(connection)) return;
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
