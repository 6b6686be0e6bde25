import type { Migration } from './migration.js';

export const migration: Migration = {
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
};
