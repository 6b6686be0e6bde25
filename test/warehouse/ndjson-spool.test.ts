import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { type SpoolReader, spoolFileRows, spoolReaderFor, withNdjsonSpool } from '../../src/warehouse/ndjson-spool.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('spool files', () => {
  it.each<SpoolReader>(['lines', 'json'])(
    'reads every line back with the %s reader, a line longer than the reader’s smallest buffer last of all, a value of another type as its text or null, and knows the longest',
    async (spoolReader) => {
      const dir = await mkdtemp(join(tmpdir(), 'ndjson-spool-'));
      dirs.push(dir);
      const long = 'Bưu cục '.repeat(300_000);
      const rows = [
        { n: 1, text: 'Nguyễn Thị Hương', list: [{ at: '2026-11-09T09:15:30Z' }], extra: true },
        { n: 2, text: 'a "quoted";, text\\twith\u0001control', list: [] },
        { n: 3, text: long, list: null },
        { n: 4, text: ['not', 'text'], list: { at: 'not a list' } },
      ];
      const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
      const connection = await instance.connect();
      try {
        const read = await withNdjsonSpool(join(dir, 'spool'), 'test', async (spool) => {
          const file = await spool.write(rows.map((row) => JSON.stringify(row)));
          expect(file.longestLineBytes).toBe(Buffer.byteLength(JSON.stringify(rows[2])));
          const fields = { n: 'INTEGER', text: 'VARCHAR', list: [{ at: 'TIMESTAMPTZ' }] } as const;
          expect(file.longestLineBytes).toBeGreaterThan(2 * 1024 * 1024);
          const reader = await connection.runAndReadAll(
            `SELECT n, length(text) AS chars, len(list) AS items, list[1].at AS first_at FROM ${spoolFileRows('$file', file, fields, spoolReader)} ORDER BY n`,
            { file: file.path },
          );
          return reader.getRowObjectsJS();
        });
        expect(read).toEqual([
          { n: 1, chars: 16n, items: 1n, first_at: new Date('2026-11-09T09:15:30Z') },
          { n: 2, chars: BigInt((rows[1]!.text as string).length), items: 0n, first_at: null },
          { n: 3, chars: BigInt(long.length), items: null, first_at: null },
          // A list where text is wanted is read as its JSON text; an object where a list is wanted, as null.
          { n: 4, chars: BigInt('["not","text"]'.length), items: null, first_at: null },
        ]);
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    },
  );
});

describe('the reader of spool files', () => {
  it("is read_json where DuckDB's memory limit leaves it room, the line reader below it or when the limit cannot be read", () => {
    expect(spoolReaderFor('488.2 MiB')).toBe('json');
    expect(spoolReaderFor('256.0 MiB')).toBe('json');
    expect(spoolReaderFor('1.5 GiB')).toBe('json');
    expect(spoolReaderFor('300MB')).toBe('json');
    expect(spoolReaderFor('255.9 MiB')).toBe('lines');
    expect(spoolReaderFor('61.0 MiB')).toBe('lines');
    expect(spoolReaderFor('64MB')).toBe('lines');
    expect(spoolReaderFor('')).toBe('lines');
    expect(spoolReaderFor('80%')).toBe('lines');
  });
});
