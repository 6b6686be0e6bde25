import type { Migration } from './migration.js';

// The receiver journals callbacks to NDJSON segment files before it acknowledges them; what part of
// each segment is in callback_events is kept here, in the same transaction as the events, so an
// ingest is never applied twice. The views merge pushed callbacks with polled tracking. A change
// and a callback are the same when order, status and time match to the second (the tracking
// history has whole seconds, the callback's Time up to seven fraction digits).
export const migration: Migration = {
  version: 10,
  name: 'callback journal ingests and merge views',
  sql: `
      CREATE TABLE callback_journal_segments (
        segment VARCHAR PRIMARY KEY,
        ingested_bytes BIGINT NOT NULL,
        ingested_lines BIGINT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE VIEW order_latest_callbacks AS
        SELECT c.order_code, c.status, c.status_name, c.event_time, c.event_id,
               coalesce(s.is_terminal, false) AS is_terminal
        FROM callback_events AS c LEFT JOIN status_codes AS s ON s.code = c.status
        QUALIFY row_number() OVER (PARTITION BY c.order_code ORDER BY c.event_time DESC, c.received_at DESC) = 1;
      CREATE VIEW order_status_timeline AS
        WITH polled AS (
          SELECT order_code, status, any_value(status_name) AS status_name, time
          FROM order_statuses GROUP BY order_code, status, time
        ), pushed AS (
          SELECT order_code, status, date_trunc('second', event_time) AS time,
                 arg_min(status_name, received_at) AS status_name, min(event_time) AS event_time,
                 arg_min(event_id, received_at) AS callback_event_id,
                 arg_min(delay_code, received_at) AS delay_code, arg_min(delay_notes, received_at) AS delay_notes
          FROM callback_events GROUP BY order_code, status, date_trunc('second', event_time)
        )
        SELECT coalesce(polled.order_code, pushed.order_code) AS order_code,
               coalesce(polled.status, pushed.status) AS status,
               coalesce(polled.status_name, pushed.status_name) AS status_name,
               coalesce(pushed.event_time, polled.time) AS time,
               pushed.delay_code, pushed.delay_notes,
               polled.order_code IS NOT NULL AS seen_by_tracking,
               pushed.order_code IS NOT NULL AS seen_by_callback,
               pushed.callback_event_id
        FROM polled FULL OUTER JOIN pushed
          ON pushed.order_code = polled.order_code AND pushed.status = polled.status AND pushed.time = polled.time;
      CREATE VIEW missed_callbacks AS
        SELECT s.order_code, o.account_alias, s.seq, s.time, s.status, s.status_name
        FROM order_statuses AS s
        JOIN orders AS o ON o.order_code = s.order_code
        WHERE s.time >= (SELECT date_trunc('second', min(event_time)) FROM callback_events)
          AND NOT EXISTS (
            SELECT 1 FROM callback_events AS c
            WHERE c.order_code = s.order_code AND c.status = s.status AND date_trunc('second', c.event_time) = s.time
          );
      CREATE VIEW untracked_callbacks AS
        SELECT c.*
        FROM callback_events AS c
        WHERE NOT EXISTS (SELECT 1 FROM orders AS o WHERE o.order_code = c.order_code)
          AND NOT EXISTS (SELECT 1 FROM run_inputs AS i WHERE i.order_code = c.order_code);`,
};
