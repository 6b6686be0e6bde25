import type { Migration } from './migration.js';

export const migration: Migration = {
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
};
