import type { Migration } from './migration.js';

// What a carrier's answer says of an order's COD money, where it says it (GHN's detail: collected,
// transferred to the shop, when), beside the statements' lines. Null where the carrier's answer does
// not say (247Express's: its statements alone tell). New columns, every row's null: nothing is copied.
const CARRIER_COD_FACTS = `
  ALTER TABLE orders ADD COLUMN cod_collected BOOLEAN;
  ALTER TABLE orders ADD COLUMN cod_collected_at TIMESTAMPTZ;
  ALTER TABLE orders ADD COLUMN cod_transferred BOOLEAN;
  ALTER TABLE orders ADD COLUMN cod_transferred_at TIMESTAMPTZ;`;

/** Version 8: the COD facts of the carriers' answers. */
export const migration: Migration = {
  version: 8,
  name: 'carrier COD facts',
  sql: CARRIER_COD_FACTS,
};
