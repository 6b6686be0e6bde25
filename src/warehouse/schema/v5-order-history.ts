import type { Migration } from './migration.js';

// The carrier keeps no history of charges or delay codes: these two tables are the partner's own.
// A failed attempt's identity is (order_code, attempted_at), the time of the status change that
// reported it, so a callback and a later tracking snapshot of the same attempt make one row.
export const migration: Migration = {
  version: 5,
  name: 'order change log and delivery failures',
  sql: `
      CREATE TABLE order_changes (
        order_code VARCHAR NOT NULL,
        field VARCHAR NOT NULL,
        old_value VARCHAR,
        new_value VARCHAR,
        seen_at TIMESTAMPTZ NOT NULL,
        run_id VARCHAR NOT NULL,
        PRIMARY KEY (order_code, field, seen_at)
      );
      CREATE TABLE delivery_failures (
        order_code VARCHAR NOT NULL,
        attempted_at TIMESTAMPTZ NOT NULL,
        delay_code VARCHAR NOT NULL,
        delay_note VARCHAR,
        province_name VARCHAR,
        post_office_name VARCHAR,
        observed_at TIMESTAMPTZ NOT NULL,
        source VARCHAR NOT NULL CHECK (source IN ('tracking', 'callback')),
        run_id VARCHAR,
        callback_event_id VARCHAR,
        PRIMARY KEY (order_code, attempted_at)
      );`,
};
