import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { spoolFileRows, withNdjsonSpool } from '../../src/warehouse/ndjson-spool.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('spool files', () => {
  it('reads every line back, a line longer than the reader’s smallest buffer last of all, and knows the longest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ndjson-spool-'));
    dirs.push(dir);
    const long = 'Bưu cục '.repeat(300_000);
    const rows = [
      { n: 1, text: 'Nguyễn Thị Hương', list: [{ at: '2026-11-09T09:15:30Z' }], extra: true },
      { n: 2, text: 'a "quoted";, text\\twith\u0001control', list: [] },
      { n: 3, text: long, list: null },
    ];
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    try {
      const read = await withNdjsonSpool(join(dir, 'spool'), 'test', async (spool) => {
        const file = await spool.write(rows.map((row) => JSON.stringify(row)));
        expect(file.longestLineBytes).toBe(Buffer.byteLength(JSON.stringify(rows[2])));
        expect(file.longestLineBytes).toBeGreaterThan(2 * 1024 * 1024);
        const reader = await connection.runAndReadAll(
          `SELECT n, length(text) AS chars, len(list) AS items FROM ${spoolFileRows('$file', file, { n: 'INTEGER', text: 'VARCHAR', list: [{ at: 'TIMESTAMPTZ' }] })} ORDER BY n`,
          { file: file.path },
        );
        return reader.getRowObjectsJS();
      });
      expect(read).toEqual([
        { n: 1, chars: 16n, items: 1n },
        { n: 2, chars: BigInt(rows[1]!.text.length), items: 0n },
        { n: 3, chars: BigInt(long.length), items: null },
      ]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
