import type { Migration } from './migration.js';

// A failed quote says why in a stable code: CARRIER_ERROR when the carrier answered IsError or
// Errors, else the failure's code (LOOKUP_MALFORMED, LOOKUP_HTTP_STATUS, ...) after every retry.
// An image the download refused (host not allowed, over the size cap) keeps the reason.
export const migration: Migration = {
  version: 9,
  name: 'quote error codes and image download errors',
  sql: `
      ALTER TABLE price_quotes ADD COLUMN error_code VARCHAR;
      ALTER TABLE order_images ADD COLUMN download_error VARCHAR;`,
};
