import type { Migration } from './migration.js';

// An order's date, by which a report's range selects it: the carrier's accept date; an order the
// carrier never accepted (cancelled before acceptance, received only) has none, and is dated by the
// earliest time of its status or handling history, else by when the warehouse first stored it. Its
// audit row keeps it too, so a charges report selects a range from that one table.
const ORDER_DATES = `
  CREATE TABLE orders_v3 (
    order_code VARCHAR PRIMARY KEY,
    account_alias VARCHAR NOT NULL,
    external_code VARCHAR,
    accept_date TIMESTAMPTZ,
    order_date TIMESTAMPTZ NOT NULL,
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
  INSERT INTO orders_v3 BY NAME
    SELECT o.*, coalesce(o.accept_date, h.earliest, o.first_seen_at) AS order_date
    FROM orders AS o
    LEFT JOIN (
      SELECT order_code, min(t) AS earliest FROM (
        SELECT order_code, "time" AS t FROM order_statuses
        UNION ALL SELECT order_code, date_change FROM order_trackings
      )
      WHERE order_code IN (SELECT order_code FROM orders WHERE accept_date IS NULL)
      GROUP BY order_code
    ) AS h ON h.order_code = o.order_code
    ORDER BY o.order_code;
  DROP TABLE orders;
  ALTER TABLE orders_v3 RENAME TO orders;
  CREATE TABLE order_charge_audit_v3 (
    order_code VARCHAR NOT NULL,
    account_alias VARCHAR NOT NULL,
    accept_date TIMESTAMPTZ,
    order_date TIMESTAMPTZ NOT NULL,
    status VARCHAR NOT NULL,
    status_name VARCHAR,
    service_type_id VARCHAR,
    price DECIMAL(20,4),
    price_fr DECIMAL(20,4),
    far_region_fee_amount DECIMAL(20,4),
    fuel_fee_amount DECIMAL(20,4),
    vat_amount DECIMAL(20,4),
    cod_amount DECIMAL(20,4),
    total_service_cost DECIMAL(20,4),
    length DOUBLE,
    width DOUBLE,
    height DOUBLE,
    real_weight DOUBLE,
    cal_weight DOUBLE,
    weight DOUBLE,
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
  );
  INSERT INTO order_charge_audit_v3 BY NAME
    SELECT a.*, o.order_date
    FROM order_charge_audit AS a JOIN orders AS o ON o.order_code = a.order_code
    ORDER BY a.order_code;
  DROP TABLE order_charge_audit;
  ALTER TABLE order_charge_audit_v3 RENAME TO order_charge_audit;`;

// What tells this program's warehouse from another DuckDB file: a schema_migrations table alone does
// not, other tools keep one too. One row, written with the schema.
const WAREHOUSE_MARKER = `
  CREATE TABLE parcel_recon_warehouse (
    product VARCHAR NOT NULL CHECK (product = 'parcel-recon'),
    marked_at TIMESTAMPTZ NOT NULL
  );
  INSERT INTO parcel_recon_warehouse VALUES ('parcel-recon', current_timestamp);`;

/** Version 3: every order has a date; the warehouse carries this program's marker. */
export const migration: Migration = {
  version: 3,
  name: 'order dates and warehouse marker',
  sql: [ORDER_DATES, WAREHOUSE_MARKER].join('\n'),
};
