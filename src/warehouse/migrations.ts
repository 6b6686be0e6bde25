import type { DuckDBConnection } from '@duckdb/node-api';
import { WarehouseError, firstLineOf } from './warehouse-errors.js';

/** One step of the warehouse schema. Versions only grow; an applied migration is never edited. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

// Money is DECIMAL(20,4): exact, with room above the carrier's whole-dong amounts. Times are
// TIMESTAMPTZ (microseconds, like the contract's instants). Fields the carrier only ever showed as
// null are JSON, kept as they came.
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'reference data',
    sql: `
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
      );`,
  },
  {
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
  },
  {
    version: 3,
    name: 'runs, run inputs and lookup results',
    sql: `
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
      );`,
  },
  {
    version: 4,
    name: 'quota usage',
    sql: `
      CREATE TABLE quota_usage (
        carrier_day DATE NOT NULL,
        key_alias VARCHAR NOT NULL,
        lookups BIGINT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (carrier_day, key_alias)
      );`,
  },
];

const CREATE_MIGRATIONS_TABLE = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
  )`;

/**
 * Applies the migrations the file has not had yet, each in its own transaction with its
 * schema_migrations row. Returns the versions applied (none when the schema is current). Refuses a
 * file whose schema is newer than this program knows: writing to it could lose data.
 */
export async function applyMigrations(connection: DuckDBConnection, label: string): Promise<number[]> {
  await connection.run(CREATE_MIGRATIONS_TABLE);
  const reader = await connection.runAndReadAll('SELECT version FROM schema_migrations');
  const appliedVersions = new Set(reader.getColumnsJS()[0]?.map(Number) ?? []);
  const latestKnown = Math.max(0, ...MIGRATIONS.map((m) => m.version));
  const newest = Math.max(0, ...appliedVersions);
  if (newest > latestKnown) {
    throw new WarehouseError(`warehouse ${label} has schema version ${newest}, newer than this parcel-recon knows (${latestKnown}); upgrade parcel-recon`);
  }
  const applied: number[] = [];
  for (const migration of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    if (appliedVersions.has(migration.version)) continue;
    await connection.run('BEGIN TRANSACTION');
    try {
      await connection.run(migration.sql);
      await connection.run('INSERT INTO schema_migrations VALUES ($version, $name, current_timestamp)', {
        version: migration.version,
        name: migration.name,
      });
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK').catch(() => undefined);
      throw new WarehouseError(`warehouse ${label}: migration ${migration.version} (${migration.name}) failed: ${firstLineOf(error)}`, { cause: error });
    }
    applied.push(migration.version);
  }
  return applied;
}
