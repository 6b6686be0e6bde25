import type { Migration } from './migration.js';

// A charges report reads each order's audit row and nothing else: the columns it reads of the order's
// own row are kept beside what its other rows come to, so a report scans one table instead of joining
// two on their codes. Every writer of an order's row recomputes its audit row from it. An order
// without an audit row reads as the version 1 report read it: no lines, no history.
const AUDIT_WITH_ORDER_COLUMNS = `
  CREATE TABLE order_charge_audit_v2 (
    order_code VARCHAR NOT NULL,
    account_alias VARCHAR NOT NULL,
    accept_date TIMESTAMPTZ,
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
  INSERT INTO order_charge_audit_v2 BY NAME
    SELECT o.order_code, o.account_alias, o.accept_date, o.status, o.status_name, o.service_type_id,
           o.price, o.price_fr, o.far_region_fee_amount, o.fuel_fee_amount, o.vat_amount, o.cod_amount,
           o.total_service_cost, o.length, o.width, o.height, o.real_weight, o.cal_weight, o.weight,
           a.price_info, coalesce(a.lines_total, 0) AS lines_total,
           coalesce(a.far_region_line_cost, 0) AS far_region_line_cost,
           coalesce(a.returned_in_history, false) AS returned_in_history,
           coalesce(a.cancelled_in_history, false) AS cancelled_in_history,
           a.delivered_at, a.quote_id, a.quote_total, a.total_at_delivery, a.total_changed_at
    FROM orders AS o LEFT JOIN order_charge_audit AS a ON a.order_code = o.order_code
    ORDER BY o.order_code;
  DROP TABLE order_charge_audit;
  ALTER TABLE order_charge_audit_v2 RENAME TO order_charge_audit;`;

/** Version 2: audit rows carry their order's billed columns. */
export const migration: Migration = {
  version: 2,
  name: 'audit rows with order columns',
  sql: AUDIT_WITH_ORDER_COLUMNS,
};
