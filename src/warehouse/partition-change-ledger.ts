import { NEXT_CHANGE_SEQUENCE, PARTITION_CHANGES_TABLE } from './schema/v9-snapshot-partition-changes.js';
import { PARTITION_KEY_SQL, PARTITIONED_TABLES, type PartitionSpec } from './snapshot-partitions.js';
import { sqlText } from './sql-literals.js';
import type { SqlParameters, SqlRunner } from './warehouse.js';

/**
 * The ledger of the snapshot partitions each write changed (`snapshot_partition_changes`). Every
 * write that inserts, updates or deletes rows of a table of PARTITIONED_TABLES records, in its
 * transaction, the partitions of those rows: the sequence number of their last change. An export
 * then rewrites the partitions changed after the sequence number its snapshot is current to, and
 * reads nothing of the others (parquet-snapshot-export.ts). A row of `'*'` marks a whole table, or
 * every table, changed.
 */

export { PARTITION_CHANGES_TABLE };

/** Relation or partition `'*'`: all of them. */
const EVERY = '*';

const UPSERT = `ON CONFLICT (relation, "partition") DO UPDATE SET sequence = excluded.sequence`;

function specOf(table: string): PartitionSpec {
  const spec = PARTITIONED_TABLES.get(table);
  if (spec === undefined) throw new RangeError(`${table} is not a partitioned table`);
  return spec;
}

/**
 * The rows of `table` whose partitions a write changed: a relation with the table's columns (its
 * carrier and the column that places a row, or the keys of the row it belongs to).
 */
export interface ChangedRows {
  readonly table: string;
  readonly rows: string;
  /**
   * Tables whose rows belong to these rows (children, placed by this table's column) and changed
   * with them: their partitions are these rows' own, recorded without reading the children's rows.
   */
  readonly children?: readonly string[];
}

/**
 * Records that the partitions of `table` holding the rows of `rows` changed. A write that removes or
 * moves rows records them before, one that adds rows after.
 */
export async function recordChangedRows(
  sql: SqlRunner,
  table: string,
  rows: string,
  parameters?: SqlParameters,
): Promise<void> {
  await recordChangedRowsOf(sql, [{ table, rows }], parameters);
}

/**
 * recordChangedRows for the rows of several tables, each named once, in one statement: a write of
 * many tables, such as a batch of the tracking load, pays for one.
 */
export async function recordChangedRowsOf(
  sql: SqlRunner,
  changes: readonly ChangedRows[],
  parameters?: SqlParameters,
): Promise<void> {
  const tables = changes.flatMap((change) => [change.table, ...(change.children ?? [])]);
  if (new Set(tables).size !== tables.length)
    throw new RangeError('each table is named once in a statement of the ledger: an upsert changes a row once');
  if (changes.length === 0) return;
  for (const { table, children = [] } of changes)
    for (const child of children)
      if (specOf(child).parent !== table)
        throw new RangeError(`the rows of ${child} are not placed by those of ${table}`);
  const partitions = changes.map(({ rows, table }, index) => `p${index} AS (${specOf(table).partitionsOf(rows)})`);
  const relations = changes.flatMap(({ table, children = [] }, index) =>
    [table, ...children].map((relation) => `SELECT ${sqlText(relation)} AS relation, carrier, month FROM p${index}`),
  );
  await sql.run(
    `INSERT INTO ${PARTITION_CHANGES_TABLE}
     WITH ${partitions.join(', ')}
     SELECT relation, ${PARTITION_KEY_SQL}, ${NEXT_CHANGE_SEQUENCE}
     FROM (${relations.join(' UNION ALL ')})
     ${UPSERT}`,
    parameters,
  );
}

/** The partitioned tables whose rows belong to a row of `parent`: they move with it. */
export function childTablesOf(parent: string): string[] {
  return [...PARTITIONED_TABLES].filter(([, spec]) => spec.parent === parent).map(([table]) => table);
}

/** Records that every partition of `table` changed: a write that replaces the whole table. */
export async function recordWholeTableChanged(sql: SqlRunner, table: string): Promise<void> {
  specOf(table);
  await sql.run(
    `INSERT INTO ${PARTITION_CHANGES_TABLE} VALUES (${sqlText(table)}, '${EVERY}', ${NEXT_CHANGE_SEQUENCE}) ${UPSERT}`,
  );
}

/** What the ledger says, read in the export's transaction. */
export interface PartitionChanges {
  /** The newest sequence number recorded: the one a snapshot of the warehouse as it is now is current to. */
  readonly current: number;
  /** The sequence number of the last change of every table at once (a schema step; the ledger's start). */
  readonly everything: number;
  /** Per table, the sequence number of its last change as a whole, and of each partition's. */
  readonly tables: ReadonlyMap<string, { whole: number; partitions: ReadonlyMap<string, number> }>;
}

/** The ledger's rows changed after `since` (all of them without it), and where it stands. */
export async function readPartitionChanges(sql: SqlRunner, since: number | undefined): Promise<PartitionChanges> {
  const reader = await sql.readAll(
    `SELECT relation, "partition", sequence FROM ${PARTITION_CHANGES_TABLE}
     WHERE sequence > $since OR "partition" = '${EVERY}' OR sequence = (SELECT max(sequence) FROM ${PARTITION_CHANGES_TABLE})`,
    { since: since ?? 0 },
  );
  let current = 0;
  let everything = 0;
  const tables = new Map<string, { whole: number; partitions: Map<string, number> }>();
  for (const row of reader.getRowObjectsJS() as { relation: string; partition: string; sequence: bigint }[]) {
    const sequence = Number(row.sequence);
    current = Math.max(current, sequence);
    if (row.relation === EVERY) {
      everything = Math.max(everything, sequence);
      continue;
    }
    const table = tables.get(row.relation) ?? { whole: 0, partitions: new Map<string, number>() };
    tables.set(row.relation, table);
    if (row.partition === EVERY) table.whole = sequence;
    else table.partitions.set(row.partition, sequence);
  }
  return { current, everything, tables };
}
