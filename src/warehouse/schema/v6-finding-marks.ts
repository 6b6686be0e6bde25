import type { Migration } from './migration.js';

// A COD finding's mark, identified by what the finding is (its check, carrier, batch and order; '' for
// the batch or order a check has none of), never by its row in a report: the finding is recomputed by
// every report and meets its mark there. The money at stake when it was marked is kept, so a finding
// whose amount has moved since is told apart. A mark replaced moves to the history, never deleted.
const FINDING_MARKS = `
  CREATE TABLE cod_finding_marks (
    finding VARCHAR NOT NULL,
    carrier VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    order_code VARCHAR NOT NULL,
    mark VARCHAR NOT NULL CHECK (mark IN ('disputed', 'settled', 'open')),
    note VARCHAR NOT NULL,
    marked_by VARCHAR NOT NULL,
    marked_at TIMESTAMPTZ NOT NULL,
    at_stake BIGINT NOT NULL,
    origin VARCHAR NOT NULL,
    PRIMARY KEY (finding, carrier, batch_id, order_code)
  );
  CREATE TABLE cod_finding_mark_history (
    finding VARCHAR NOT NULL,
    carrier VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    order_code VARCHAR NOT NULL,
    mark VARCHAR NOT NULL,
    note VARCHAR NOT NULL,
    marked_by VARCHAR NOT NULL,
    marked_at TIMESTAMPTZ NOT NULL,
    at_stake BIGINT NOT NULL,
    origin VARCHAR NOT NULL,
    replaced_at TIMESTAMPTZ NOT NULL
  );`;

/** Version 6: the marks (disputed, settled) finance gives COD findings, and the marks they replaced. */
export const migration: Migration = {
  version: 6,
  name: 'cod finding marks',
  sql: FINDING_MARKS,
};
