import { DEFAULT_CARRIER_ID } from '../../carriers/known-carriers.js';
import type { Migration } from './migration.js';

/** A table rebuilt with `carrier` first, every row it held becoming the default carrier's. */
interface RebuiltTable {
  readonly table: string;
  /** The table's columns and constraints after `carrier`, as in its CREATE TABLE. */
  readonly columns: string;
}

const CARRIER = `'${DEFAULT_CARRIER_ID}'`;

// DuckDB changes no primary key in place: each table is made beside the old one, filled, and takes
// its name once the old one is dropped, all in the migration's one transaction, so a step that fails
// leaves the file as it was.
function rebuilt({ table, columns }: RebuiltTable): string {
  return `
  CREATE TABLE ${table}_v5 (carrier VARCHAR NOT NULL, ${columns});
  INSERT INTO ${table}_v5 SELECT ${CARRIER}, * FROM ${table};
  DROP TABLE ${table};
  ALTER TABLE ${table}_v5 RENAME TO ${table};`;
}

// Every table of order rows: an order is (carrier, order_code), the shop's own order id
// (external_code) a column beside it. Tables of a run or a key alias take the carrier too.
const ORDER_TABLES: readonly RebuiltTable[] = [
  {
    table: 'orders',
    columns: `order_code VARCHAR NOT NULL, account_alias VARCHAR NOT NULL, external_code VARCHAR,
      accept_date TIMESTAMPTZ, order_date TIMESTAMPTZ NOT NULL, status VARCHAR NOT NULL, status_name VARCHAR,
      tracking_name VARCHAR, delay_code VARCHAR, delay_note VARCHAR, delivery_notes VARCHAR,
      delivery_date TIMESTAMPTZ, po_delivery_id JSON, mail_man JSON, receiver_name VARCHAR,
      service_type_id VARCHAR, mailer_type_id VARCHAR, extra_service_name VARCHAR, length DOUBLE, width DOUBLE,
      height DOUBLE, real_weight DOUBLE, cal_weight DOUBLE, weight DOUBLE, quantity INTEGER,
      price DECIMAL(20,4), price_fr DECIMAL(20,4), far_region_fee_amount DECIMAL(20,4),
      fuel_fee_amount DECIMAL(20,4), vat_amount DECIMAL(20,4), total_service_cost DECIMAL(20,4),
      edt_from JSON, edt_to JSON, sender_id JSON, sender_name JSON, post_office_accept_id JSON,
      cod_amount DECIMAL(20,4), estimate_routes JSON, confirm_image JSON, is_terminal BOOLEAN NOT NULL,
      first_seen_at TIMESTAMPTZ NOT NULL, last_seen_at TIMESTAMPTZ NOT NULL, last_run_id VARCHAR NOT NULL,
      PRIMARY KEY (carrier, order_code)`,
  },
  {
    table: 'order_charges',
    columns: `order_code VARCHAR NOT NULL, line_no INTEGER NOT NULL, service_id VARCHAR, service_name VARCHAR,
      cost DECIMAL(20,4)`,
  },
  {
    table: 'order_statuses',
    columns: `order_code VARCHAR NOT NULL, seq INTEGER NOT NULL, "time" TIMESTAMPTZ, status VARCHAR,
      status_name VARCHAR, tracking_name VARCHAR, province_name VARCHAR, post_office_name VARCHAR`,
  },
  {
    table: 'order_trackings',
    columns: `order_code VARCHAR NOT NULL, seq INTEGER NOT NULL, status_id VARCHAR, status_name VARCHAR,
      post_office_id VARCHAR, post_office_name VARCHAR, province_id VARCHAR, province_name VARCHAR,
      date_change TIMESTAMPTZ, notes VARCHAR`,
  },
  {
    table: 'order_changes',
    columns: `order_code VARCHAR NOT NULL, field VARCHAR NOT NULL, old_value VARCHAR, new_value VARCHAR,
      seen_at TIMESTAMPTZ NOT NULL, run_id VARCHAR NOT NULL, PRIMARY KEY (carrier, order_code, field, seen_at)`,
  },
  {
    table: 'delivery_failures',
    columns: `order_code VARCHAR NOT NULL, attempted_at TIMESTAMPTZ NOT NULL, delay_code VARCHAR, delay_note VARCHAR,
      province_name VARCHAR, post_office_name VARCHAR, observed_at TIMESTAMPTZ NOT NULL,
      source VARCHAR NOT NULL CHECK (source IN ('tracking', 'callback')), run_id VARCHAR, callback_event_id VARCHAR,
      PRIMARY KEY (carrier, order_code, attempted_at)`,
  },
  {
    table: 'order_charge_audit',
    columns: `order_code VARCHAR NOT NULL, account_alias VARCHAR NOT NULL, accept_date TIMESTAMPTZ,
      order_date TIMESTAMPTZ NOT NULL, status VARCHAR NOT NULL, status_name VARCHAR, service_type_id VARCHAR,
      price DECIMAL(20,4), price_fr DECIMAL(20,4), far_region_fee_amount DECIMAL(20,4),
      fuel_fee_amount DECIMAL(20,4), vat_amount DECIMAL(20,4), cod_amount DECIMAL(20,4),
      total_service_cost DECIMAL(20,4), length DOUBLE, width DOUBLE, height DOUBLE, real_weight DOUBLE,
      cal_weight DOUBLE, weight DOUBLE, price_info VARCHAR, lines_total DECIMAL(20,4) NOT NULL,
      far_region_line_cost DECIMAL(20,4) NOT NULL, returned_in_history BOOLEAN NOT NULL,
      cancelled_in_history BOOLEAN NOT NULL, delivered_at TIMESTAMPTZ, quote_id VARCHAR,
      quote_total DECIMAL(20,4), total_at_delivery DECIMAL(20,4), total_changed_at TIMESTAMPTZ`,
  },
  {
    table: 'callback_events',
    columns: `event_id VARCHAR NOT NULL, order_code VARCHAR NOT NULL, status VARCHAR NOT NULL, status_name VARCHAR,
      event_time TIMESTAMPTZ NOT NULL, transaction_id VARCHAR, delivery_date TIMESTAMPTZ, receiver_name VARCHAR,
      mailman VARCHAR, delivery_notes VARCHAR, delay_code VARCHAR, delay_notes VARCHAR,
      request_feedback_count INTEGER, description VARCHAR, external_code VARCHAR, reference_code VARCHAR,
      account_alias VARCHAR, auth_method VARCHAR NOT NULL, received_at TIMESTAMPTZ NOT NULL, body JSON NOT NULL,
      PRIMARY KEY (carrier, event_id)`,
  },
  {
    table: 'price_quotes',
    columns: `quote_id VARCHAR NOT NULL, run_id VARCHAR NOT NULL, order_code VARCHAR, account_alias VARCHAR NOT NULL,
      to_province_name VARCHAR NOT NULL, to_district_name VARCHAR NOT NULL, to_ward_name VARCHAR NOT NULL,
      length DOUBLE NOT NULL, width DOUBLE NOT NULL, height DOUBLE NOT NULL, real_weight DOUBLE NOT NULL,
      client_hub_id VARCHAR NOT NULL, service_type_id VARCHAR NOT NULL, ok BOOLEAN NOT NULL, error_message VARCHAR,
      main_price DECIMAL(20,4), total_service_cost DECIMAL(20,4), coupon_money_remainder DECIMAL(20,4),
      deposit_change_amount DECIMAL(20,4), cal_weight DOUBLE, weight DOUBLE, price_matrix_id VARCHAR,
      quoted_at TIMESTAMPTZ NOT NULL, error_code VARCHAR, PRIMARY KEY (carrier, quote_id)`,
  },
  {
    table: 'price_quote_lines',
    columns: `quote_id VARCHAR NOT NULL, line_no INTEGER NOT NULL, extra_service_id INTEGER, service_id VARCHAR,
      service_name VARCHAR, type INTEGER, cost DECIMAL(20,4), inform_fee DECIMAL(20,4), is_default_service BOOLEAN,
      PRIMARY KEY (carrier, quote_id, line_no)`,
  },
  {
    table: 'order_image_lists',
    columns: `order_code VARCHAR NOT NULL, account_alias VARCHAR NOT NULL, image_count INTEGER NOT NULL,
      fetched_at TIMESTAMPTZ NOT NULL, run_id VARCHAR NOT NULL, PRIMARY KEY (carrier, order_code)`,
  },
  {
    table: 'order_images',
    columns: `order_code VARCHAR NOT NULL, no INTEGER NOT NULL, image_url VARCHAR NOT NULL,
      fetched_at TIMESTAMPTZ NOT NULL, downloaded_path VARCHAR, download_error VARCHAR,
      PRIMARY KEY (carrier, order_code, no)`,
  },
  {
    table: 'run_inputs',
    columns: `run_id VARCHAR NOT NULL, seq BIGINT NOT NULL, order_code VARCHAR, account_alias VARCHAR, origin VARCHAR,
      reject_code VARCHAR, reject_reason VARCHAR, PRIMARY KEY (run_id, seq)`,
  },
  {
    table: 'lookup_results',
    columns: `run_id VARCHAR NOT NULL, order_code VARCHAR NOT NULL, account_alias VARCHAR,
      outcome VARCHAR NOT NULL CHECK (outcome IN ('ok', 'carrier_error', 'transport_error', 'rejected', 'deferred')),
      error_code VARCHAR, error_message VARCHAR, attempts INTEGER NOT NULL, origin VARCHAR,
      finished_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (carrier, run_id, order_code)`,
  },
  {
    table: 'quota_usage',
    columns: `carrier_day DATE NOT NULL, key_alias VARCHAR NOT NULL, lookups BIGINT NOT NULL,
      updated_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (carrier, carrier_day, key_alias)`,
  },
  {
    table: 'quota_limit_answers',
    columns: `carrier_day DATE NOT NULL, key_alias VARCHAR NOT NULL, answered_at TIMESTAMPTZ NOT NULL,
      PRIMARY KEY (carrier, carrier_day, key_alias)`,
  },
];

// The reference tables hold each known carrier's rows, reloaded from the program on every writable
// open (right after this step), so their old rows are not carried over. A carrier's status keeps the
// neutral status it is; the neutral statuses have their own table.
const REFERENCE_TABLES = `
  DROP TABLE status_codes;
  CREATE TABLE status_codes (
    carrier VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    display_name VARCHAR NOT NULL,
    meaning VARCHAR NOT NULL,
    is_terminal BOOLEAN NOT NULL,
    neutral_status VARCHAR NOT NULL,
    PRIMARY KEY (carrier, code)
  );
  DROP TABLE delay_reasons;
  CREATE TABLE delay_reasons (
    carrier VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    meaning VARCHAR NOT NULL,
    -- NULL where the carrier publishes no courier's text of the reason (GHN).
    note VARCHAR,
    PRIMARY KEY (carrier, code)
  );
  DROP TABLE tracking_steps;
  CREATE TABLE tracking_steps (
    carrier VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    display_name VARCHAR NOT NULL,
    PRIMARY KEY (carrier, code)
  );
  CREATE TABLE neutral_statuses (
    neutral_status VARCHAR PRIMARY KEY,
    meaning VARCHAR NOT NULL
  );`;

// The views of version 1, an order being (carrier, order_code) and a status (carrier, code).
const CALLBACK_VIEWS = `
  CREATE OR REPLACE VIEW order_latest_callbacks AS
    SELECT c.carrier, c.order_code, c.status, c.status_name, c.event_time, c.event_id,
           coalesce(s.is_terminal, false) AS is_terminal
    FROM callback_events AS c LEFT JOIN status_codes AS s ON s.carrier = c.carrier AND s.code = c.status
    QUALIFY row_number() OVER (PARTITION BY c.carrier, c.order_code ORDER BY c.event_time DESC, c.received_at DESC) = 1;
  CREATE OR REPLACE VIEW order_status_timeline AS
    WITH polled AS (
      SELECT carrier, order_code, status, any_value(status_name) AS status_name, time
      FROM order_statuses GROUP BY carrier, order_code, status, time
    ), pushed AS (
      SELECT carrier, order_code, status, date_trunc('second', event_time) AS time,
             arg_min(status_name, received_at) AS status_name, min(event_time) AS event_time,
             arg_min(event_id, received_at) AS callback_event_id,
             arg_min(delay_code, received_at) AS delay_code, arg_min(delay_notes, received_at) AS delay_notes
      FROM callback_events GROUP BY carrier, order_code, status, date_trunc('second', event_time)
    )
    SELECT coalesce(polled.carrier, pushed.carrier) AS carrier,
           coalesce(polled.order_code, pushed.order_code) AS order_code,
           coalesce(polled.status, pushed.status) AS status,
           coalesce(polled.status_name, pushed.status_name) AS status_name,
           coalesce(pushed.event_time, polled.time) AS time,
           pushed.delay_code, pushed.delay_notes,
           polled.order_code IS NOT NULL AS seen_by_tracking,
           pushed.order_code IS NOT NULL AS seen_by_callback,
           pushed.callback_event_id
    FROM polled FULL OUTER JOIN pushed
      ON pushed.carrier = polled.carrier AND pushed.order_code = polled.order_code
     AND pushed.status = polled.status AND pushed.time = polled.time;
  CREATE OR REPLACE VIEW missed_callbacks AS
    SELECT s.carrier, s.order_code, o.account_alias, s.seq, s.time, s.status, s.status_name
    FROM order_statuses AS s
    JOIN orders AS o ON o.carrier = s.carrier AND o.order_code = s.order_code
    WHERE s.time >= (SELECT date_trunc('second', min(event_time)) FROM callback_events AS f WHERE f.carrier = s.carrier)
      AND NOT EXISTS (
        SELECT 1 FROM callback_events AS c
        WHERE c.carrier = s.carrier AND c.order_code = s.order_code AND c.status = s.status
          AND date_trunc('second', c.event_time) = s.time
      );
  CREATE OR REPLACE VIEW untracked_callbacks AS
    SELECT c.*
    FROM callback_events AS c
    WHERE NOT EXISTS (SELECT 1 FROM orders AS o WHERE o.carrier = c.carrier AND o.order_code = c.order_code)
      AND NOT EXISTS (SELECT 1 FROM run_inputs AS i WHERE i.carrier = c.carrier AND i.order_code = c.order_code);`;

/**
 * Version 5: the warehouse knows carriers. Every table of order rows, the quota ledger and the
 * reference tables are keyed by carrier first; what the warehouse held is the default carrier's.
 */
export const migration: Migration = {
  version: 5,
  name: 'carriers',
  sql: [...ORDER_TABLES.map(rebuilt), REFERENCE_TABLES, CALLBACK_VIEWS].join('\n'),
  copiesEveryTable: true,
};
