import type { Migration } from './migration.js';

// The history tables lose their primary keys. The loader replaces an order's rows by deleting them
// all and inserting the new snapshot's, so a key never caught anything; DuckDB's DELETE ... IN
// (subquery) is a hash join that does not use the index either. Yet the index held every row's key in
// memory (most of a million-order run's memory) and its upkeep was a good share of each load.
const HISTORY_TABLES = {
  order_charges: `
        order_code VARCHAR NOT NULL,
        line_no INTEGER NOT NULL,
        service_id VARCHAR,
        service_name VARCHAR,
        cost DECIMAL(20,4)`,
  order_statuses: `
        order_code VARCHAR NOT NULL,
        seq INTEGER NOT NULL,
        "time" TIMESTAMPTZ,
        status VARCHAR,
        status_name VARCHAR,
        tracking_name VARCHAR,
        province_name VARCHAR,
        post_office_name VARCHAR`,
  order_trackings: `
        order_code VARCHAR NOT NULL,
        seq INTEGER NOT NULL,
        status_id VARCHAR,
        status_name VARCHAR,
        post_office_id VARCHAR,
        post_office_name VARCHAR,
        province_id VARCHAR,
        province_name VARCHAR,
        date_change TIMESTAMPTZ,
        notes VARCHAR`,
};

export const migration: Migration = {
  version: 12,
  name: 'history tables without primary keys',
  sql: Object.entries(HISTORY_TABLES)
    .map(
      ([table, columns]) => `
      CREATE TABLE ${table}_rebuilt (${columns});
      INSERT INTO ${table}_rebuilt SELECT * FROM ${table} ORDER BY order_code;
      DROP TABLE ${table};
      ALTER TABLE ${table}_rebuilt RENAME TO ${table};`,
    )
    .join(''),
};
