/**
 * A report file spells each value as DuckDB casts it to text, by faster ways where the type allows
 * (zeros as constants, wide decimals through 64 bits): for any value, the fast spelling is the
 * cast's, character for character. Times are spelled in the display time zone with their offset, in
 * SQL as the product spells them in messages.
 */
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { displayTimeSql, formatDisplayMicros, formatDisplayTime } from '../../src/reports/display-time.js';
import { columnsOf, textOfColumnSql } from '../../src/reports/writers/column-text.js';

let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  await connection.run("SET TimeZone = 'UTC'");
});

afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

/** Each value of `literals` (SQL literals of `type`) spelled by textOfColumnSql and by a cast. */
async function spellings(type: string, literals: readonly string[]): Promise<[unknown, unknown][]> {
  const values = `SELECT CAST(v AS ${type}) AS v FROM (VALUES ${literals.map((l) => `(${l})`).join(', ')}) AS t(v)`;
  const { types } = await columnsOf(connection, values);
  const rows = await connection.runAndReadAll(
    `SELECT ${textOfColumnSql('v', types[0]!)}, CAST(v AS VARCHAR) FROM (${values})`,
  );
  return rows.getRows() as [unknown, unknown][];
}

function expectSame(pairs: readonly [unknown, unknown][]): void {
  for (const [fast, cast] of pairs) expect(fast).toBe(cast);
}

const DOUBLES = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-320),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((n) => n / 100),
);

/** A double as an exact SQL literal (-0.0, nan and infinities included). */
function doubleLiteral(value: number): string {
  if (Number.isNaN(value)) return "'nan'";
  if (!Number.isFinite(value)) return value > 0 ? "'infinity'" : "'-infinity'";
  return Object.is(value, -0) ? "'-0.0'" : `'${value.toPrecision(17)}'`;
}

/** Decimal text of up to `digits` digits and `scale` of them after the point; zeros often. */
function decimals(digits: number, scale: number) {
  const whole = fc.bigInt({ min: -(10n ** BigInt(digits)) + 1n, max: 10n ** BigInt(digits) - 1n });
  return fc.oneof(whole, fc.constant(0n), fc.bigInt({ min: -10_000n, max: 10_000n })).map((units) => {
    const sign = units < 0n ? '-' : '';
    const text = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
    return scale === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -scale)}.${text.slice(-scale)}`;
  });
}

describe('a value spelled for a report file', () => {
  test.prop([fc.array(DOUBLES, { minLength: 1, maxLength: 50 })])('a DOUBLE as its cast', async (values) => {
    expectSame(await spellings('DOUBLE', values.map(doubleLiteral)));
  });

  test.prop([fc.array(DOUBLES, { minLength: 1, maxLength: 50 })])('a FLOAT as its cast', async (values) => {
    expectSame(await spellings('FLOAT', values.map(doubleLiteral)));
  });

  for (const [digits, scale] of [
    [18, 4],
    [15, 4],
    [20, 4],
    [38, 4],
    [38, 20],
    [10, 0],
  ] as const) {
    test.prop([fc.array(decimals(digits, scale), { minLength: 1, maxLength: 50 })])(
      `a DECIMAL(${digits},${scale}) as its cast`,
      async (values) => {
        expectSame(
          await spellings(
            `DECIMAL(${digits},${scale})`,
            values.map((v) => `'${v}'`),
          ),
        );
      },
    );
  }

  // From 1980 (zones before then had offsets in seconds) to 2090, with microseconds.
  const INSTANTS_US = fc.bigInt({ min: 315_532_800_000_000n, max: 3_786_825_600_000_000n });
  for (const zone of ['Asia/Ho_Chi_Minh', 'Europe/Berlin', 'America/St_Johns', 'UTC']) {
    test.prop([fc.array(INSTANTS_US, { minLength: 1, maxLength: 50 })])(
      `a TIMESTAMPTZ in ${zone} with its offset, as messages spell it`,
      async (times) => {
        const values = `SELECT make_timestamptz(v) AS v FROM (VALUES ${times.map((t) => `(${t})`).join(', ')}) AS t(v)`;
        const rows = await connection.runAndReadAll(
          `SELECT ${displayTimeSql('v', zone)}, epoch_ms(v) FROM (${values})`,
        );
        expectSame(rows.getRows().map(([text, ms]) => [text, formatDisplayTime(Number(ms), zone)]));
      },
    );
    test.prop([fc.array(INSTANTS_US, { minLength: 1, maxLength: 50 })])(
      `a TIMESTAMPTZ in ${zone} as sql prints it: the report's spelling with the fraction of its second`,
      async (times) => {
        const values = `SELECT make_timestamptz(v) AS v FROM (VALUES ${times.map((t) => `(${t})`).join(', ')}) AS t(v)`;
        const rows = await connection.runAndReadAll(
          `SELECT epoch_us(v), ${displayTimeSql('v', zone)}, strftime(v, '%f') FROM (${values})`,
        );
        for (const [micros, seconds, fraction] of rows.getRows() as [bigint, string, string][]) {
          const shown = formatDisplayMicros(micros, zone)!;
          const digits = /^(.{19})(?:\.(\d{1,6}))?(.{6})$/.exec(shown);
          expect(digits, shown).not.toBeNull();
          expect(`${digits![1]}${digits![3]}`).toBe(seconds);
          expect((digits![2] ?? '').padEnd(6, '0')).toBe(fraction);
          expect(digits![2]?.endsWith('0') ?? false).toBe(false);
        }
      },
    );
  }

  test('a TIMESTAMPTZ sql prints as DuckDB does: infinity and a year of other than four digits', async () => {
    const rows = await connection.runAndReadAll(
      `SELECT epoch_us(v) FROM (VALUES (TIMESTAMPTZ '10000-01-01 00:00:00+00'), (TIMESTAMPTZ '-0001-06-01 00:00:00+00')) AS t(v)`,
    );
    for (const [micros] of rows.getRows() as [bigint][]) expect(formatDisplayMicros(micros, 'UTC')).toBeUndefined();
    expect(formatDisplayMicros(9_223_372_036_854_775_807n, 'Asia/Ho_Chi_Minh')).toBeUndefined();
    expect(formatDisplayMicros(-9_223_372_036_854_775_807n, 'Asia/Ho_Chi_Minh')).toBeUndefined();
    expect(formatDisplayMicros(-1n, 'UTC')).toBe('1969-12-31T23:59:59.999999+00:00');
  });

  test.prop([fc.array(fc.option(fc.boolean()), { minLength: 1, maxLength: 20 })])(
    'a BOOLEAN as its cast',
    async (values) => {
      expectSame(
        await spellings(
          'BOOLEAN',
          values.map((v) => (v === null ? 'NULL' : String(v))),
        ),
      );
    },
  );
});
