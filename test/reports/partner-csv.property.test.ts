import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { fc } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPartnerCsvWithDuckDb, loadPartnerRecords } from '../../src/reports/partner-records.js';

let dir: string;
let instances: DuckDBInstance[] = [];
/** A connection that may read files: a partner CSV that qualifies is read by DuckDB. */
let open: DuckDBConnection;
/** A connection that may read no file: every partner CSV goes through the CSV parser. */
let confined: DuckDBConnection;
let fileNo = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'partner-csv-'));
  instances = [await DuckDBInstance.create(':memory:'), await DuckDBInstance.create(':memory:')];
  open = await instances[0]!.connect();
  confined = await instances[1]!.connect();
  await confined.run('SET enable_external_access = false');
});

afterAll(async () => {
  open.closeSync();
  confined.closeSync();
  for (const instance of instances) instance.closeSync();
  await rm(dir, { recursive: true, force: true });
});

async function written(text: string): Promise<string> {
  const file = join(dir, `partner-${++fileNo}.csv`);
  await writeFile(file, text);
  return file;
}

async function records(connection: DuckDBConnection): Promise<unknown[][]> {
  const reader = await connection.runAndReadAll(
    'SELECT line_no, origin, order_code, expected_status, invoiced_amount, cod_amount FROM partner_records ORDER BY line_no',
  );
  return reader.getRows();
}

/** What loading `file` gives on a connection: the rows and the count, or the error's message. */
async function loaded(
  connection: DuckDBConnection,
  file: string,
): Promise<{ count: number; rows: unknown[][] } | string> {
  try {
    const count = await loadPartnerRecords(connection, { kind: 'csv', file });
    return { count, rows: await records(connection) };
  } catch (error) {
    return (error as Error).message;
  }
}

const HEADER_NAMES = [
  'order_code',
  ' OrderCode ',
  'ORDER_CODE',
  'expected_status',
  'invoiced_amount',
  ' Cod_Amount',
  'extra',
  '',
] as const;
/** Visible ASCII characters. */
const ASCII_CHARS = [...'aZ09-.#'];
/** Characters a value is made of: ASCII, Vietnamese letters, white space String.prototype.trim removes and some it keeps. */
const VALUE_CHARS = [
  ...ASCII_CHARS,
  ' ',
  '\t',
  '\v',
  '\f',
  '\u00a0',
  '\u2003',
  '\u3000',
  '\ufeff',
  '\u200b',
  '\u0000',
  ...'Đãàgiaohàngữ',
] as const;

function valuesOf(chars: readonly string[]): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...chars), maxLength: 8 });
}

const plainValue = valuesOf(VALUE_CHARS);
/** A value as a CSV may hold it: plain, or quoted with the delimiters, quotes and newlines inside. */
const anyValue = fc.oneof(
  { weight: 4, arbitrary: plainValue },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.constantFrom(...VALUE_CHARS, ',', ';', '""', '\n', '\r\n'), maxLength: 6 })
      .map((text) => `"${text}"`),
  },
  { weight: 1, arbitrary: fc.constantFrom('a"b', ' "x"', '"x" ', '"') },
);

/** A CSV file's lines (header first), how they end, and whether it starts with a byte order mark. */
interface CsvFile {
  readonly bom: boolean;
  readonly newline: '\n' | '\r\n';
  readonly finalNewline: boolean;
  readonly lines: readonly string[];
}

function csvText(file: CsvFile): string {
  return `${file.bom ? '\uFEFF' : ''}${file.lines.join(file.newline)}${file.finalNewline ? file.newline : ''}`;
}

/** A line of up to `maxFields` fields, each after one of `separators`. */
function csvLine(values: fc.Arbitrary<string>, separators: fc.Arbitrary<string>, maxFields: number) {
  return fc
    .array(fc.tuple(separators, values), { minLength: 1, maxLength: maxFields })
    .map((fields) => fields.map(([separator, value], index) => (index === 0 ? value : separator + value)).join(''));
}

/** Files with a header of `header` names and rows of `values`, fields separated by `separators`. */
function csvFiles(
  header: fc.Arbitrary<string[]>,
  values: fc.Arbitrary<string>,
  separators: fc.Arbitrary<string>,
  rowLines: (line: fc.Arbitrary<string>) => fc.Arbitrary<string>,
  extraFields: number,
): fc.Arbitrary<CsvFile> {
  return header.chain((names) =>
    fc.record({
      bom: fc.boolean(),
      newline: fc.constantFrom<'\n' | '\r\n'>('\n', '\r\n'),
      finalNewline: fc.boolean(),
      lines: fc
        .array(rowLines(csvLine(values, separators, names.length + extraFields)), { maxLength: 6 })
        .chain((rows) => separators.map((separator) => [names.join(separator), ...rows])),
    }),
  );
}

const headerNames = fc.array(fc.constantFrom(...HEADER_NAMES), { minLength: 1, maxLength: 5 });

describe('partner CSV files read by DuckDB', () => {
  it('give the records, line numbers and values the CSV parser gives', async () => {
    // No quote, one delimiter, no empty line, order_code in the header: files DuckDB reads itself,
    // in ASCII without white space, ASCII with spaces, or any text.
    const plainFiles = fc
      .tuple(fc.constantFrom(',', ';'), fc.constantFrom(ASCII_CHARS, [...ASCII_CHARS, ' '], VALUE_CHARS))
      .chain(([delimiter, chars]) =>
        csvFiles(
          headerNames.map((names) => (names.includes('order_code') ? names : ['order_code', ...names])),
          valuesOf(chars),
          fc.constant(delimiter),
          (line) => line.filter((text) => text !== ''),
          0,
        ),
      );
    await fc.assert(
      fc.asyncProperty(plainFiles, async (file) => {
        const path = await written(csvText(file));
        const count = await loadPartnerCsvWithDuckDb(open, path);
        expect(count).toBe(file.lines.length - 1);
        expect(await loaded(confined, path)).toEqual({ count, rows: await records(open) });
      }),
      { numRuns: 200 },
    );
  });

  it('leave any other file to the CSV parser: the same records, line numbers and messages', async () => {
    // Quotes around delimiters and newlines, stray quotes, mixed delimiters, empty and long lines.
    const anyFiles = fc
      .boolean()
      .chain((mixed) =>
        csvFiles(
          headerNames,
          anyValue,
          mixed ? fc.constantFrom(',', ';') : fc.constant(','),
          (line) => fc.oneof({ weight: 5, arbitrary: line }, { weight: 1, arbitrary: fc.constant('') }),
          2,
        ),
      );
    await fc.assert(
      fc.asyncProperty(anyFiles, async (file) => {
        const path = await written(csvText(file));
        expect(await loaded(open, path)).toEqual(await loaded(confined, path));
      }),
      { numRuns: 300 },
    );
  });
});
