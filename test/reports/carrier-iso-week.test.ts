/**
 * The ISO week of an attempt is that of its carrier-local day (UTC+07:00), also across the ends of
 * years, where the ISO year differs from the calendar year.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierIsoWeek } from '../../src/reports/report-sql.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The ISO week of a calendar day (YYYY-MM-DD): the week holding its Thursday, numbered in that Thursday's year. */
function isoWeekOf(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  const thursday = new Date(date.getTime() + (3 - ((date.getUTCDay() + 6) % 7)) * DAY);
  const week = Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / DAY / 7) + 1;
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

describe('carrierIsoWeek', () => {
  let dir: string;
  let warehouse: Warehouse;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-iso-week-'));
    warehouse = await Warehouse.open(join(dir, 'recon.duckdb'));
  });

  afterAll(async () => {
    await warehouse?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('gives the ISO week of the carrier-local day, every 5 hours over the turns of eight years', async () => {
    const instants = [2020, 2021, 2022, 2023, 2024, 2025, 2026, 2027].flatMap((year) =>
      Array.from({ length: 60 }, (_, i) => Date.UTC(year, 11, 24) + i * 5 * HOUR),
    );
    await warehouse.run('CREATE TABLE instants (seen TIMESTAMPTZ)');
    for (const at of instants)
      await warehouse.run('INSERT INTO instants VALUES (CAST($1 AS TIMESTAMPTZ))', [new Date(at).toISOString()]);
    const rows = (
      await warehouse.readAll(`SELECT ${carrierIsoWeek('seen')} AS week FROM instants ORDER BY seen`)
    ).getRowObjectsJson();
    expect(rows.map((r) => r.week)).toEqual(
      instants.map((at) => isoWeekOf(new Date(at + 7 * HOUR).toISOString().slice(0, 10))),
    );
  });
});
