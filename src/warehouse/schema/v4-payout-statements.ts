import type { Migration } from './migration.js';

// A payout statement's lines, identified by what they are (carrier, batch, order, kind of line), never
// by the file they came in: a statement imported again finds its lines already there. Amounts are
// whole VND. A line a corrected statement replaced moves to the history with its fees, never deleted.
// A line's fees have no key in the file (checking one costs more than loading the rows): the importer
// writes each (line, fee type) once.
const PAYOUT_STATEMENTS = `
  CREATE TABLE payout_lines (
    carrier VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    order_code VARCHAR NOT NULL,
    line_kind VARCHAR NOT NULL,
    batch_date DATE NOT NULL,
    batch_stated_total BIGINT,
    cod_collected BIGINT NOT NULL,
    fees_withheld BIGINT NOT NULL,
    debts BIGINT NOT NULL,
    net_paid BIGINT NOT NULL,
    origin VARCHAR NOT NULL,
    import_id VARCHAR NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (carrier, batch_id, order_code, line_kind)
  );
  CREATE TABLE payout_line_fees (
    carrier VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    order_code VARCHAR NOT NULL,
    line_kind VARCHAR NOT NULL,
    fee_type VARCHAR NOT NULL,
    amount BIGINT NOT NULL
  );
  CREATE TABLE payout_line_history (
    carrier VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    order_code VARCHAR NOT NULL,
    line_kind VARCHAR NOT NULL,
    batch_date DATE NOT NULL,
    batch_stated_total BIGINT,
    cod_collected BIGINT NOT NULL,
    fees_withheld BIGINT NOT NULL,
    fees JSON NOT NULL,
    debts BIGINT NOT NULL,
    net_paid BIGINT NOT NULL,
    origin VARCHAR NOT NULL,
    import_id VARCHAR NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL,
    replaced_by_import VARCHAR NOT NULL,
    replaced_at TIMESTAMPTZ NOT NULL
  );
  CREATE TABLE payout_imports (
    import_id VARCHAR PRIMARY KEY,
    carrier VARCHAR NOT NULL,
    layout VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL,
    lines_read BIGINT NOT NULL,
    lines_imported BIGINT NOT NULL,
    lines_unchanged BIGINT NOT NULL,
    batches_replaced BIGINT NOT NULL,
    lines_replaced BIGINT NOT NULL,
    lines_rejected BIGINT NOT NULL,
    rejects_file VARCHAR
  );`;

/** Version 4: carriers' payout statements, their lines' history and the imports that brought them. */
export const migration: Migration = {
  version: 4,
  name: 'payout statements',
  sql: PAYOUT_STATEMENTS,
};
