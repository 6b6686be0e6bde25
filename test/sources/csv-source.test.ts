import { createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CsvSourceOptions, csvSource } from '../../src/sources/csv-source.js';
import {
  type SourcedCode,
  SourceError,
  type SourceItem,
  type SourceRejection,
} from '../../src/sources/order-code-source.js';
import { readItems, sourceErrorOf } from '../support/source-reading.js';

// V8's collector, for measuring live memory: exposed for this file without a flag on every test worker.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-source-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a file of the corpus and returns its path. */
async function corpusFile(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

interface ReadResult {
  readonly codes: SourcedCode[];
  readonly rejections: SourceRejection[];
  readonly items: SourceItem[];
}

async function readAll(input: string, options: CsvSourceOptions = {}): Promise<ReadResult> {
  const items = await readItems(csvSource(input, options));
  return {
    items,
    codes: items.flatMap((item) => (item.kind === 'code' ? [item.code] : [])),
    rejections: items.flatMap((item) => (item.kind === 'rejected' ? [item.rejection] : [])),
  };
}

function sourceError(input: string, options: CsvSourceOptions = {}): Promise<SourceError> {
  return sourceErrorOf(csvSource(input, options));
}

/** A CSV of `rows` distinct codes, written in batches of lines. */
function* generatedRows(rows: number): Generator<string> {
  yield 'order_code,account\n';
  for (let start = 0; start < rows; start += 10_000) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(rows, start + 10_000); i++)
      lines.push(`EX${String(i).padStart(9, '0')},acc${i % 3}\n`);
    yield lines.join('');
  }
}

/** Splits bytes into chunks of `size`, cutting through CRLFs and multi-byte characters. */
function chunked(content: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < content.length; at += size) chunks.push(content.subarray(at, at + size));
  return chunks;
}

describe('csvSource: formats', () => {
  it('reads a BOM, CRLF, `;` detected from the header, quoted fields and blank lines, with exact lines', async () => {
    const path = await corpusFile(
      'excel.csv',
      [
        '\ufefforder_code;account;note', // 1
        'EX100000001;acc1;plain', // 2
        '', // 3
        '"EX100000002";"acc;2";"with, a comma"', // 4
        '"EX100000003";acc3;"two', // 5
        'lines"', // 6
        '  EX100000004 ;;x', // 7
        '', // 8
        '', // 9
      ].join('\r\n'),
    );
    const { codes, rejections } = await readAll(path);
    expect(rejections).toEqual([]);
    expect(codes).toEqual([
      { orderCode: 'EX100000001', account: 'acc1', origin: `${path}:2` },
      { orderCode: 'EX100000002', account: 'acc;2', origin: `${path}:4` },
      { orderCode: 'EX100000003', account: 'acc3', origin: `${path}:5` },
      { orderCode: 'EX100000004', account: null, origin: `${path}:7` },
    ]);
  });

  it('reads `,` with LF, OrderCode and Account headers in any case, quoted newlines and doubled quotes', async () => {
    const path = await corpusFile(
      'plain.csv',
      `${[
        'id,OrderCode,note,Account', // 1
        '1,EX200000001,"say ""hi""",a1', // 2
        '2,EX200000002,"line one', // 3
        'line two; still the note',
        'line three",a2', // 5
        '   ', // 6: blank
        ',,,', // 7: every field empty, a blank row
        '3, "EX200000003" ,n,  ', // 8
      ].join('\n')}\n`,
    );
    const { codes, rejections } = await readAll(path);
    expect(rejections).toEqual([]);
    expect(codes).toEqual([
      { orderCode: 'EX200000001', account: 'a1', origin: `${path}:2` },
      { orderCode: 'EX200000002', account: 'a2', origin: `${path}:3` },
      // A space before the quote makes csv-parse keep the quotes (relax_quotes): the code checks catch it.
      { orderCode: '"EX200000003"', account: null, origin: `${path}:8` },
    ]);
  });

  it('reads ORDER_CODE with no account column, and a last line without a line break', async () => {
    const path = await corpusFile('upper.csv', 'ORDER_CODE\nEX300000001\nEX300000002');
    const { codes } = await readAll(path);
    expect(codes).toEqual([
      { orderCode: 'EX300000001', account: null, origin: `${path}:2` },
      { orderCode: 'EX300000002', account: null, origin: `${path}:3` },
    ]);
  });

  it('reads a carrier column in any case, an empty one as none', async () => {
    const path = await corpusFile('carriers.csv', 'order_code,Carrier,account\nEX1,247express,a\nG1, GHN ,\nEX2,,b\n');
    expect((await readAll(path)).codes).toEqual([
      { orderCode: 'EX1', account: 'a', carrier: '247express', origin: `${path}:2` },
      { orderCode: 'G1', account: null, carrier: 'GHN', origin: `${path}:3` },
      { orderCode: 'EX2', account: 'b', carrier: null, origin: `${path}:4` },
    ]);
  });

  it('finds the header and its delimiter after a BOM and blank or whitespace-only lines', async () => {
    const path = await corpusFile('late-header.csv', '\ufeff\r\n  \t\r\nORDER_CODE;Account\r\nEX330000001;a,b\r\n');
    expect((await readAll(path)).codes).toEqual([{ orderCode: 'EX330000001', account: 'a,b', origin: `${path}:4` }]);
  });

  it('reads lines ended by CR alone, and by a mix of LF, CRLF and CR', async () => {
    const mac = await corpusFile('mac.csv', 'order_code\rEX310000001\r\rEX310000002\r');
    expect((await readAll(mac)).codes.map((c) => c.origin)).toEqual([`${mac}:2`, `${mac}:4`]);
    const mixed = await corpusFile(
      'mixed.csv',
      'order_code,account\nEX320000001,a\r\nEX320000002,b\rEX320000003,c\n"EX320000004",d',
    );
    expect((await readAll(mixed)).codes).toEqual([
      { orderCode: 'EX320000001', account: 'a', origin: `${mixed}:2` },
      { orderCode: 'EX320000002', account: 'b', origin: `${mixed}:3` },
      { orderCode: 'EX320000003', account: 'c', origin: `${mixed}:4` },
      { orderCode: 'EX320000004', account: 'd', origin: `${mixed}:5` },
    ]);
  });

  it('uses the delimiter given over the one the header has more of', async () => {
    const path = await corpusFile('given.csv', 'order_code,account,notes;more;and;more\nEX400000001,a;b,x\n');
    expect((await readAll(path, { delimiter: ',' })).codes).toEqual([
      { orderCode: 'EX400000001', account: 'a;b', origin: `${path}:2` },
    ]);
    expect((await sourceError(path)).message).toBe(
      `${path}: no order_code column; the columns are "order_code,account,notes", "more", "and", "more"`,
    );
  });

  it('keeps valid non-ASCII text and trims codes and accounts', async () => {
    const path = await corpusFile('unicode.csv', 'order_code,account\n  EX500000001  ,  Hà Nội  \n');
    expect((await readAll(path)).codes).toEqual([{ orderCode: 'EX500000001', account: 'Hà Nội', origin: `${path}:2` }]);
  });

  it('describes itself by path or as stdin', () => {
    expect(csvSource('data/orders.csv').description).toBe('csv:data/orders.csv');
    expect(csvSource('-').description).toBe('csv:stdin');
  });
});

describe('csvSource: rows it rejects while the run goes on', () => {
  it('rejects a row without an order code and a row with another number of fields, naming the line', async () => {
    const path = await corpusFile(
      'gaps.csv',
      [
        'order_code,account',
        'EX600000001,a',
        ',b',
        '"  ",c',
        'EX600000004,d,extra',
        'EX600000005',
        'EX600000006,e',
      ].join('\n'),
    );
    const { codes, rejections } = await readAll(path);
    expect(codes.map((c) => c.origin)).toEqual([`${path}:2`, `${path}:7`]);
    expect(rejections).toEqual([
      { origin: `${path}:3`, reason: 'no order_code in this row', text: ',b' },
      { origin: `${path}:4`, reason: 'no order_code in this row', text: '"  ",c' },
      { origin: `${path}:5`, reason: 'the row has 3 fields, the header 2', text: 'EX600000004,d,extra' },
      { origin: `${path}:6`, reason: 'the row has 1 field, the header 2', text: 'EX600000005' },
    ]);
  });

  it('rejects a line over the limit in the middle and reads the rows before and after it', async () => {
    // Past csv-parse's own limit too (16 times ours), after which csv-parse itself reads nothing more.
    const huge = `EX7${'X'.repeat(2_000_000)},acc`;
    const path = await corpusFile(
      'huge.csv',
      `${['order_code,account', 'EX700000001,a', huge, 'EX700000003,c', 'EX700000004,d'].join('\n')}\n`,
    );
    const { codes, rejections, items } = await readAll(path);
    expect(codes.map((c) => [c.orderCode, c.origin])).toEqual([
      ['EX700000001', `${path}:2`],
      ['EX700000003', `${path}:4`],
      ['EX700000004', `${path}:5`],
    ]);
    expect(rejections).toEqual([{ origin: `${path}:3`, reason: 'record over 65536 bytes', text: huge.slice(0, 200) }]);
    expect(items[1]?.kind).toBe('rejected');
  });

  it('rejects over-long lines with a small limit, whatever the chunking, lines numbered right after them', async () => {
    const content = Buffer.from(
      [
        'order_code;account', // 1
        'EX800000001;a', // 2
        `EX800000002;${'é'.repeat(40)}`, // 3: 12 + 80 bytes
        'EX800000003;c', // 4
        `"EX800000004";"${'x'.repeat(30)}`, // 5: a quoted field over two lines of 30 bytes each,
        `${'y'.repeat(30)}"`, // 6: within the line limit, over the record limit
        `${'z'.repeat(51)}`, // 7: just over
        `${'z'.repeat(50)}`, // 8: exactly at the limit: a row with one field
        'EX800000009;i', // 9
        `EX80000000A;${'w'.repeat(5000)}`, // 10: past csv-parse's own limit too
        'EX80000000B;k', // 11
      ].join('\r\n'),
    );
    for (const size of [1, 3, 7, 64, 65_536]) {
      const { codes, rejections } = await readAll('-', {
        stdin: Readable.from(chunked(content, size)),
        maxRecordBytes: 50,
      });
      expect(
        codes.map((c) => c.origin),
        `chunks of ${size}`,
      ).toEqual(['stdin:2', 'stdin:4', 'stdin:9', 'stdin:11']);
      expect(
        rejections.map((r) => [r.origin, r.reason]),
        `chunks of ${size}`,
      ).toEqual([
        ['stdin:3', 'record over 50 bytes'],
        ['stdin:5', 'record over 50 bytes'],
        ['stdin:7', 'record over 50 bytes'],
        ['stdin:8', 'the row has 1 field, the header 2'],
        ['stdin:10', 'record over 50 bytes'],
      ]);
      expect(rejections[0]?.text).toBe(`EX800000002;${'é'.repeat(40)}`);
    }
  });

  it('rejects a row with bytes that are not UTF-8 and reads the others', async () => {
    const path = await corpusFile(
      'latin1.csv',
      Buffer.concat([
        Buffer.from('order_code,account\nEX900000001,a\nEX900000002,'),
        Buffer.from([0x48, 0xe0, 0x20, 0x4e, 0xf4, 0x69]), // "Hà Nôi" in Latin-1
        Buffer.from('\nEX900000003,c\n'),
      ]),
    );
    const { codes, rejections } = await readAll(path);
    expect(codes.map((c) => c.origin)).toEqual([`${path}:2`, `${path}:4`]);
    expect(rejections).toEqual([
      { origin: `${path}:3`, reason: 'not valid UTF-8', text: 'EX900000002,H\ufffd N\ufffdi' },
    ]);
  });

  it('rejects a row whose quote is never closed, at the line it starts on', async () => {
    const path = await corpusFile(
      'unclosed.csv',
      'order_code,account\r\nEXA00000001,a\r\nEXA00000002,"b\r\nEXA00000003,c\r\n',
    );
    const { codes, rejections } = await readAll(path);
    expect(codes.map((c) => c.orderCode)).toEqual(['EXA00000001']);
    expect(rejections).toEqual([
      {
        origin: `${path}:3`,
        reason: 'unclosed quote: the record runs to the end of the input',
        text: 'EXA00000002,"b\r\nEXA00000003,c',
      },
    ]);
  });

  it('fails, after the rows before it, when a quote left open swallows far more than the limit', async () => {
    const content = [
      'order_code,account',
      'EXB00000001,a',
      'EXB00000002,"b',
      ...Array.from({ length: 200 }, (_, i) => `EXB${i},c`),
    ].join('\n');
    const items: SourceItem[] = [];
    const failure = (async () => {
      for await (const item of csvSource('-', { stdin: Readable.from([content]), maxRecordBytes: 64 }).items())
        items.push(item);
    })();
    await expect(failure).rejects.toThrow(SourceError);
    await expect(failure).rejects.toThrow(/^stdin:3: a record runs on far past 64 bytes \(an unclosed quote\?\)/);
    expect(items).toEqual([{ kind: 'code', code: { orderCode: 'EXB00000001', account: 'a', origin: 'stdin:2' } }]);
  });
});

describe('csvSource: problems with the whole source', () => {
  it('names the columns it found when there is no order_code column', async () => {
    const path = await corpusFile('nocode.csv', 'id;code;Order Code\n1;EXC00000001;x\n');
    const error = await sourceError(path);
    expect(error.message).toBe(`${path}: no order_code column; the columns are "id", "code", "Order Code"`);
  });

  it('says a missing file, a directory and an unreadable file cannot be read', async () => {
    expect((await sourceError(join(dir, 'missing.csv'))).message).toBe(
      `cannot read ${join(dir, 'missing.csv')}: no such file`,
    );
    const folder = join(dir, 'folder.csv');
    await mkdir(folder);
    expect((await sourceError(folder)).message).toBe(`cannot read ${folder}: it is a directory`);
    if (process.getuid?.() !== 0) {
      const locked = await corpusFile('locked.csv', 'order_code\nEXD00000001\n');
      await chmod(locked, 0o000);
      expect((await sourceError(locked)).message).toBe(`cannot read ${locked}: permission denied`);
    }
  });

  it('says an empty file, or one of blank lines, is empty', async () => {
    const empty = await corpusFile('empty.csv', '');
    expect((await sourceError(empty)).message).toBe(`${empty} is empty: no header line`);
    const blank = await corpusFile('blank.csv', '\r\n\n  \n');
    expect((await sourceError(blank)).message).toBe(`${blank} is empty: no header line`);
  });

  it('refuses a header that is not UTF-8, or longer than the limit', async () => {
    const latin1 = await corpusFile(
      'header-latin1.csv',
      Buffer.concat([Buffer.from('order_code,'), Buffer.from([0xe9]), Buffer.from('\nEXE00000001,a\n')]),
    );
    expect((await sourceError(latin1)).message).toBe(`${latin1}:1: the header line is not valid UTF-8`);
    const long = await corpusFile('header-long.csv', `order_code,${'x'.repeat(200)}\nEXE00000002,a\n`);
    expect((await sourceError(long, { maxRecordBytes: 100 })).message).toBe(
      `${long}: the header line is over 100 bytes`,
    );
  });

  it('refuses a header whose quote is never closed', async () => {
    const path = await corpusFile('header-quote.csv', 'order_code,"account\nEXF00000001,a\n');
    expect((await sourceError(path)).message).toBe(
      `${path}:1: cannot read the header line: unclosed quote: the record runs to the end of the input`,
    );
  });
});

describe('csvSource: standard input and streaming', () => {
  it('reads standard input given as a stream, with stdin:LINE origins', async () => {
    const stdin = Readable.from(['order_code,account\n', 'EXG00000001,a\n\nEXG0', '0000002,b\n', ',c\n']);
    const { codes, rejections } = await readAll('-', { stdin });
    expect(codes).toEqual([
      { orderCode: 'EXG00000001', account: 'a', origin: 'stdin:2' },
      { orderCode: 'EXG00000002', account: 'b', origin: 'stdin:4' },
    ]);
    expect(rejections).toEqual([{ origin: 'stdin:5', reason: 'no order_code in this row', text: ',c' }]);
  });

  it('fails with the reason when its input fails while being read', async () => {
    const stdin = new Readable({ read() {} });
    stdin.push('order_code\nEXI00000001\n');
    setTimeout(() => stdin.destroy(new Error('connection reset by peer')), 10);
    const error = await sourceErrorOf(csvSource('-', { stdin }));
    expect(error.message).toBe('cannot read stdin: connection reset by peer');
  });

  it('stops reading and closes its input when the consumer stops early', async () => {
    const stdin = new PassThrough();
    stdin.write('order_code\nEXH00000001\nEXH00000002\n');
    const seen: string[] = [];
    for await (const item of csvSource('-', { stdin }).items()) {
      if (item.kind === 'code') seen.push(item.code.orderCode);
      break;
    }
    expect(seen).toEqual(['EXH00000001']);
    expect(stdin.destroyed).toBe(true);
  });

  it('streams a million rows with little memory and counts them exactly', async () => {
    const rows = 1_000_000;
    const path = join(dir, 'million.csv');
    await pipeline(Readable.from(generatedRows(rows)), createWriteStream(path));

    // The heap that is still live, garbage collected first: what the read holds, whatever other tests of
    // the worker left and whenever V8 would collect on its own.
    const liveHeap = () => {
      collectGarbage();
      return process.memoryUsage().heapUsed;
    };
    const heapBefore = liveHeap();
    let codes = 0;
    let lastOrigin = '';
    let heapPeak = heapBefore;
    for await (const item of csvSource(path).items()) {
      if (item.kind !== 'code') throw new Error(`unexpected rejection ${JSON.stringify(item.rejection)}`);
      codes++;
      lastOrigin = item.code.origin;
      if (codes % 100_000 === 0) heapPeak = Math.max(heapPeak, liveHeap());
    }
    expect(codes).toBe(rows);
    expect(lastOrigin).toBe(`${path}:${rows + 1}`);
    // Less than the file (about 17 MB), which a read that held it whole would keep as one string at least.
    expect((await stat(path)).size).toBeGreaterThan(16 * 1024 * 1024);
    expect(heapPeak - heapBefore).toBeLessThan(16 * 1024 * 1024);
  });
});
