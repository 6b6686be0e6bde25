import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { parseCarrierInstant } from '../../src/carriers/247express/contract.js';
import { carrierInstant } from '../../src/carriers/answer-sql.js';

/** Every form parseCarrierInstant accepts, and edges of each: the loader's SQL must read them alike. */
const FORMS = [
  '2019-08-07T11:24:12+07:00',
  '2019-08-07 11:24:12',
  '2019-08-07T11:24',
  '2019-08-07T11:24:12.1234567+07:00',
  '2019-08-07T11:24:12.4946223+07:00',
  '2019-08-07T11:24:12,5Z',
  '2019-08-07t11:24:12z',
  ' 2019-08-07T11:24:12 +0700 ',
  '2019-08-07T11:24:12-05:30',
  '2019-08-07T11:24:12+14:00',
  '0050-08-07T11:24:12+07:00',
  '0001-01-01T07:00:00+07:00',
  '2019-12-31T23:59:59.999999-00:00',
  '2020-02-29T00:00:00+07:00',
  '2019-08-07T11:24:12.000001',
  '2026-01-01T03:00:00+07:00',
];

describe('carrierInstant (SQL)', () => {
  it('gives the instant parseCarrierInstant gives, for every accepted form, whatever the session time zone', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run("SET TimeZone = 'America/New_York'");
      await connection.run('CREATE TABLE forms (text VARCHAR)');
      for (const text of FORMS) await connection.run('INSERT INTO forms VALUES ($text)', { text });
      const reader = await connection.runAndReadAll(
        `SELECT text, strftime(timezone('UTC', ${carrierInstant('text')}), '%Y-%m-%dT%H:%M:%S.%fZ') AS instant FROM forms`,
      );
      const read = Object.fromEntries(reader.getRowObjectsJS().map((row) => [row.text, row.instant]));
      for (const text of FORMS)
        expect({ text, instant: read[text] }).toEqual({ text, instant: parseCarrierInstant(text) });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
