import type { Migration } from './migration.js';

// The carrier's deposits to the shop's bank account, as the shop's bank export lists them, identified
// by what they are (day, amount, reference): an export read again, or two that overlap, add nothing.
const BANK_DEPOSITS = `
  CREATE TABLE bank_deposits (
    deposit_day DATE NOT NULL,
    amount BIGINT NOT NULL,
    reference VARCHAR NOT NULL,
    origin VARCHAR NOT NULL,
    import_id VARCHAR NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (deposit_day, amount, reference)
  );`;

/** Version 7: the shop's bank deposits, against which the payout batches are checked. */
export const migration: Migration = {
  version: 7,
  name: 'bank deposits',
  sql: BANK_DEPOSITS,
};
