import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 3,
  name: 'runs, run inputs and lookup results',
  sql: `
      CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        job VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ,
        carrier_day DATE NOT NULL,
        codes_read BIGINT,
        codes_rejected BIGINT,
        codes_duplicate BIGINT,
        codes_to_look_up BIGINT,
        looked_up_ok BIGINT,
        carrier_errors BIGINT,
        transport_errors BIGINT,
        deferred BIGINT,
        lookups_spent BIGINT,
        exit_code INTEGER,
        exit_state VARCHAR NOT NULL,
        summary JSON
      );
      CREATE TABLE run_inputs (
        run_id VARCHAR NOT NULL,
        seq BIGINT NOT NULL,
        order_code VARCHAR,
        account_alias VARCHAR,
        origin VARCHAR,
        reject_code VARCHAR,
        reject_reason VARCHAR,
        PRIMARY KEY (run_id, seq)
      );
      CREATE TABLE lookup_results (
        run_id VARCHAR NOT NULL,
        order_code VARCHAR NOT NULL,
        account_alias VARCHAR,
        outcome VARCHAR NOT NULL CHECK (outcome IN ('ok', 'carrier_error', 'transport_error', 'rejected', 'deferred')),
        error_code VARCHAR,
        error_message VARCHAR,
        attempts INTEGER NOT NULL,
        origin VARCHAR,
        finished_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (run_id, order_code)
      );`,
};
