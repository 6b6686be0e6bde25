import type { Migration } from './migration.js';

// One row per distinct callback: event_id is the TransactionId when the carrier sent one, else a
// hash of order, status and time. The ApiKey of the body is never stored, only the alias it matched.
export const migration: Migration = {
  version: 6,
  name: 'callback events',
  sql: `
      CREATE TABLE callback_events (
        event_id VARCHAR PRIMARY KEY,
        order_code VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        status_name VARCHAR,
        event_time TIMESTAMPTZ NOT NULL,
        transaction_id VARCHAR,
        delivery_date TIMESTAMPTZ,
        receiver_name VARCHAR,
        mailman VARCHAR,
        delivery_notes VARCHAR,
        delay_code VARCHAR,
        delay_notes VARCHAR,
        request_feedback_count INTEGER,
        description VARCHAR,
        external_code VARCHAR,
        reference_code VARCHAR,
        account_alias VARCHAR,
        auth_method VARCHAR NOT NULL,
        received_at TIMESTAMPTZ NOT NULL,
        body JSON NOT NULL
      );`,
};
