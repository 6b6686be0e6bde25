import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainCsvShape } from '../../src/reports/csv-file-shape.js';

/** The size of the chunks the file is read in. */
const CHUNK = 1 << 20;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-file-shape-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The shape of a file of `head`, lines of padding up to the first chunk's end, then `across` and `tail`. */
async function shapeAcross(head: string, across: string, tail: string, newline: string) {
  const line = `EX000000001,30${newline}`;
  const fill = CHUNK - head.length - Math.floor(across.length / 2);
  const whole = Math.floor(fill / line.length);
  // The last padding line is longer, so that `across` starts where its middle falls on the chunks' border.
  const longLine = `EX${'0'.repeat(fill - (whole - 1) * line.length - 5 - newline.length)},30${newline}`;
  const padding = `${line.repeat(whole - 1)}${longLine}`;
  const text = head + padding + across + tail;
  expect(text.indexOf(across, head.length + padding.length - 1)).toBe(CHUNK - Math.floor(across.length / 2));
  const file = join(dir, `across-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(file, text);
  return { shape: await plainCsvShape(file), lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
}

describe('the shape of a CSV file read in chunks', () => {
  it('counts a line ending split across two chunks once', async () => {
    const { shape, lines } = await shapeAcross('order_code,x\r\n', 'EX1,2\r\nEX3,4', '\r\nEX5,6\r\n', '\r\n');
    expect(shape).toEqual({ lines, delimiter: ',', blanks: 'none' });
  });

  it('sees an empty line split across two chunks', async () => {
    for (const [across, newline] of [
      ['EX1\n\nEX2', '\n'],
      ['EX1\r\n\r\nEX2', '\r\n'],
    ] as const)
      expect((await shapeAcross(`order_code${newline}`, across, newline, newline)).shape).toBeUndefined();
  });

  it('sees a lone carriage return, and a second delimiter, in a later chunk', async () => {
    expect((await shapeAcross('order_code\n', 'EX1\rEX2', '\n', '\n')).shape).toBeUndefined();
    expect((await shapeAcross('order_code\n', 'EX1;EX2', '\n', '\n')).shape).toBeUndefined();
  });
});
