import type { Migration } from './migration.js';

// A quote keeps the request it answered, so finance can compare like with like. A failed quote
// (IsError, or Errors not empty) is a row with ok = false and its message, never lines.
// order_image_lists says an order's image list was fetched, so an empty list (image_count 0) is
// known to be empty, unlike an order never asked.
export const migration: Migration = {
  version: 7,
  name: 'price quotes and order images',
  sql: `
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
        quoted_at TIMESTAMPTZ NOT NULL
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
        PRIMARY KEY (order_code, no)
      );`,
};
