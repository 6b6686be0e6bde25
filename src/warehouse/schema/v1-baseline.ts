import type { Migration } from './migration.js';

// The carrier's reference tables; the program reloads their rows from the contract on every open.
const REFERENCE_TABLES = `
  CREATE TABLE status_codes (
    code VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    display_name VARCHAR NOT NULL,
    meaning VARCHAR NOT NULL,
    is_terminal BOOLEAN NOT NULL
  );
  CREATE TABLE delay_reasons (
    code VARCHAR PRIMARY KEY,
    meaning VARCHAR NOT NULL,
    note VARCHAR NOT NULL
  );
  CREATE TABLE tracking_steps (
    code VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    display_name VARCHAR NOT NULL
  );`;

// Money is DECIMAL(20,4): exact, with room above the carrier's whole-dong amounts. Times are
// TIMESTAMPTZ (microseconds, like the contract's instants). Fields the carrier only ever showed as
// null are JSON, kept as they came.
// The history tables (charges, statuses, trackings) have no primary key: the loader replaces an
// order's rows as a whole, so a key would never catch anything, while its index would hold every
// row's key in memory and slow each load.
const ORDER_TABLES = `
  CREATE TABLE orders (
    order_code VARCHAR PRIMARY KEY,
    account_alias VARCHAR NOT NULL,
    external_code VARCHAR,
    accept_date TIMESTAMPTZ,
    status VARCHAR NOT NULL,
    status_name VARCHAR,
    tracking_name VARCHAR,
    delay_code VARCHAR,
    delay_note VARCHAR,
    delivery_notes VARCHAR,
    delivery_date TIMESTAMPTZ,
    po_delivery_id JSON,
    mail_man JSON,
    receiver_name VARCHAR,
    service_type_id VARCHAR,
    mailer_type_id VARCHAR,
    extra_service_name VARCHAR,
    length DOUBLE,
    width DOUBLE,
    height DOUBLE,
    real_weight DOUBLE,
    cal_weight DOUBLE,
    weight DOUBLE,
    quantity INTEGER,
    price DECIMAL(20,4),
    price_fr DECIMAL(20,4),
    far_region_fee_amount DECIMAL(20,4),
    fuel_fee_amount DECIMAL(20,4),
    vat_amount DECIMAL(20,4),
    total_service_cost DECIMAL(20,4),
    edt_from JSON,
    edt_to JSON,
    sender_id JSON,
    sender_name JSON,
    post_office_accept_id JSON,
    cod_amount DECIMAL(20,4),
    estimate_routes JSON,
    confirm_image JSON,
    is_terminal BOOLEAN NOT NULL,
    first_seen_at TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    last_run_id VARCHAR NOT NULL
  );
  CREATE TABLE order_charges (
    order_code VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    service_id VARCHAR,
    service_name VARCHAR,
    cost DECIMAL(20,4)
  );
  CREATE TABLE order_statuses (
    order_code VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    "time" TIMESTAMPTZ,
    status VARCHAR,
    status_name VARCHAR,
    tracking_name VARCHAR,
    province_name VARCHAR,
    post_office_name VARCHAR
  );
  CREATE TABLE order_trackings (
    order_code VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    status_id VARCHAR,
    status_name VARCHAR,
    post_office_id VARCHAR,
    post_office_name VARCHAR,
    province_id VARCHAR,
    province_name VARCHAR,
    date_change TIMESTAMPTZ,
    notes VARCHAR
  );`;

const RUN_TABLES = `
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
  );
  CREATE TABLE quota_usage (
    carrier_day DATE NOT NULL,
    key_alias VARCHAR NOT NULL,
    lookups BIGINT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (carrier_day, key_alias)
  );
  -- The carrier's APIKEY_LIMIT answers, kept apart from quota_usage: what was sent and what the
  -- carrier said are two facts. A key listed for a day takes no more lookups that day.
  CREATE TABLE quota_limit_answers (
    carrier_day DATE NOT NULL,
    key_alias VARCHAR NOT NULL,
    answered_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (carrier_day, key_alias)
  );`;

// The carrier keeps no history of charges or delay codes: these two tables are the partner's own.
// A failed attempt's identity is (order_code, attempted_at), the time of the status change that
// reported it, so a callback and a later tracking snapshot of the same attempt make one row. A
// snapshot gives the delay code of the latest attempt only, so an earlier attempt seen in its
// history is kept with a null delay_code rather than dropped.
const ORDER_HISTORY_TABLES = `
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
    delay_code VARCHAR,
    delay_note VARCHAR,
    province_name VARCHAR,
    post_office_name VARCHAR,
    observed_at TIMESTAMPTZ NOT NULL,
    source VARCHAR NOT NULL CHECK (source IN ('tracking', 'callback')),
    run_id VARCHAR,
    callback_event_id VARCHAR,
    PRIMARY KEY (order_code, attempted_at)
  );`;

// What the charge checks read of an order's other rows (charge lines, statuses, latest quote, changes
// after delivery), one row per order, recomputed by the writers of those rows for the orders they
// change: a report reads its range's rows here instead of aggregating the history tables. No key:
// an index over every order would cost each load more than the rewrite of a batch's rows.
const CHARGE_AUDIT_TABLE = `
  CREATE TABLE order_charge_audit (
    order_code VARCHAR NOT NULL,
    price_info VARCHAR,
    lines_total DECIMAL(20,4) NOT NULL,
    far_region_line_cost DECIMAL(20,4) NOT NULL,
    returned_in_history BOOLEAN NOT NULL,
    cancelled_in_history BOOLEAN NOT NULL,
    delivered_at TIMESTAMPTZ,
    quote_id VARCHAR,
    quote_total DECIMAL(20,4),
    total_at_delivery DECIMAL(20,4),
    total_changed_at TIMESTAMPTZ
  );`;

// One row per distinct callback: event_id is the TransactionId when the carrier sent one, else a
// hash of order, status and time. The ApiKey of the body is never stored, only the alias it matched.
// The receiver journals callbacks to NDJSON segment files before it acknowledges them; how much of
// each segment is in callback_events is kept in callback_journal_segments, in the same transaction
// as the events, so an ingest is never applied twice.
const CALLBACK_TABLES = `
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
  );
  CREATE TABLE callback_journal_segments (
    segment VARCHAR PRIMARY KEY,
    ingested_bytes BIGINT NOT NULL,
    ingested_lines BIGINT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
  );`;

// A quote keeps the request it answered, so finance can compare like with like. A failed quote
// (IsError, or Errors not empty) is a row with ok = false, its message and a stable error_code
// (CARRIER_ERROR, or the failure's code after every retry), never lines. order_image_lists says an
// order's image list was fetched, so an empty list (image_count 0) is known to be empty, unlike an
// order never asked; an image the download refused keeps the reason in download_error.
const QUOTE_AND_IMAGE_TABLES = `
  CREATE TABLE price_quotes (
    quote_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    order_code VARCHAR,
    account_alias VARCHAR NOT NULL,
    to_province_name VARCHAR NOT NULL,
    to_district_name VARCHAR NOT NULL,
    to_ward_name VARCHAR NOT NULL,
    length DOUBLE NOT NULL,
    width DOUBLE NOT NULL,
    height DOUBLE NOT NULL,
    real_weight DOUBLE NOT NULL,
    client_hub_id VARCHAR NOT NULL,
    service_type_id VARCHAR NOT NULL,
    ok BOOLEAN NOT NULL,
    error_message VARCHAR,
    main_price DECIMAL(20,4),
    total_service_cost DECIMAL(20,4),
    coupon_money_remainder DECIMAL(20,4),
    deposit_change_amount DECIMAL(20,4),
    cal_weight DOUBLE,
    weight DOUBLE,
    price_matrix_id VARCHAR,
    quoted_at TIMESTAMPTZ NOT NULL,
    error_code VARCHAR
  );
  CREATE TABLE price_quote_lines (
    quote_id VARCHAR NOT NULL,
    line_no INTEGER NOT NULL,
    extra_service_id INTEGER,
    service_id VARCHAR,
    service_name VARCHAR,
    type INTEGER,
    cost DECIMAL(20,4),
    inform_fee DECIMAL(20,4),
    is_default_service BOOLEAN,
    PRIMARY KEY (quote_id, line_no)
  );
  CREATE TABLE order_image_lists (
    order_code VARCHAR PRIMARY KEY,
    account_alias VARCHAR NOT NULL,
    image_count INTEGER NOT NULL,
    fetched_at TIMESTAMPTZ NOT NULL,
    run_id VARCHAR NOT NULL
  );
  CREATE TABLE order_images (
    order_code VARCHAR NOT NULL,
    no INTEGER NOT NULL,
    image_url VARCHAR NOT NULL,
    fetched_at TIMESTAMPTZ NOT NULL,
    downloaded_path VARCHAR,
    download_error VARCHAR,
    PRIMARY KEY (order_code, no)
  );`;

// The views merge pushed callbacks with polled tracking. A change and a callback are the same when
// order, status and time match to the second (the tracking history has whole seconds, the
// callback's Time up to seven fraction digits).
const CALLBACK_VIEWS = `
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
      AND NOT EXISTS (SELECT 1 FROM run_inputs AS i WHERE i.order_code = c.order_code);`;

/** Version 1: the schema of the first release; later changes are migrations after it. */
export const migration: Migration = {
  version: 1,
  name: 'baseline',
  sql: [
    REFERENCE_TABLES,
    ORDER_TABLES,
    RUN_TABLES,
    ORDER_HISTORY_TABLES,
    CHARGE_AUDIT_TABLE,
    CALLBACK_TABLES,
    QUOTE_AND_IMAGE_TABLES,
    CALLBACK_VIEWS,
  ].join('\n'),
};
