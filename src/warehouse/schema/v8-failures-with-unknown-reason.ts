import type { Migration } from './migration.js';

// A tracking snapshot shows every failed attempt (status 16) in its statuses, but the delay code of
// the latest one only: an earlier attempt first seen in the history has no known reason, and is
// kept with a null delay_code rather than dropped.
export const migration: Migration = {
  version: 8,
  name: 'delivery failures with an unknown reason',
  sql: `ALTER TABLE delivery_failures ALTER COLUMN delay_code DROP NOT NULL;`,
};
