import type { Migration } from './migration.js';

/** The schema version from which every write records the partitions it changed. */
export const PARTITION_CHANGES_VERSION = 9;
export const PARTITION_CHANGES_TABLE = 'snapshot_partition_changes';

/**
 * The next sequence number: one past the ledger's newest. Kept in the table, not in a DuckDB sequence,
 * so that a copy of the warehouse (a compaction's COPY FROM DATABASE) goes on from where it stood.
 */
export const NEXT_CHANGE_SEQUENCE = `(SELECT coalesce(max(sequence), 0) + 1 FROM ${PARTITION_CHANGES_TABLE})`;

/** Marks every partition of every table changed: what a schema step that may rewrite rows leaves. */
export const MARK_EVERY_PARTITION_CHANGED = `INSERT INTO ${PARTITION_CHANGES_TABLE} VALUES ('*', '*', ${NEXT_CHANGE_SEQUENCE})
  ON CONFLICT (relation, "partition") DO UPDATE SET sequence = excluded.sequence`;

// Which partitions of the snapshot's partitioned tables each write changed (partition-change-ledger.ts),
// so that an export rewrites those alone and reads nothing of the others. One row per partition, its
// sequence number that of its last change; relation or partition '*' stands for all of them. The ledger
// is complete from its '*' row on: the changes before it were never recorded.
const SNAPSHOT_PARTITION_CHANGES = `
  CREATE TABLE ${PARTITION_CHANGES_TABLE} (
    relation VARCHAR NOT NULL,
    "partition" VARCHAR NOT NULL,
    sequence BIGINT NOT NULL,
    PRIMARY KEY (relation, "partition")
  );
  ${MARK_EVERY_PARTITION_CHANGED};`;

/** Version 9: the ledger of the snapshot partitions each write changed. */
export const migration: Migration = {
  version: PARTITION_CHANGES_VERSION,
  name: 'snapshot partition changes',
  sql: SNAPSHOT_PARTITION_CHANGES,
};
