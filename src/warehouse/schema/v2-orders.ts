import type { Migration } from './migration.js';

// Money is DECIMAL(20,4): exact, with room above the carrier's whole-dong amounts. Times are
// TIMESTAMPTZ (microseconds, like the contract's instants). Fields the carrier only ever showed as
// null are JSON, kept as they came.
export const migration: Migration = {
  version: 2,
  name: 'orders and their history',
  sql: `
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
        cost DECIMAL(20,4),
        PRIMARY KEY (order_code, line_no)
      );
      CREATE TABLE order_statuses (
        order_code VARCHAR NOT NULL,
        seq INTEGER NOT NULL,
        "time" TIMESTAMPTZ,
        status VARCHAR,
        status_name VARCHAR,
        tracking_name VARCHAR,
        province_name VARCHAR,
        post_office_name VARCHAR,
        PRIMARY KEY (order_code, seq)
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
        notes VARCHAR,
        PRIMARY KEY (order_code, seq)
      );`,
};
