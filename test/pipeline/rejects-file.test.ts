import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RejectsFile } from '../../src/pipeline/rejects-file.js';

const run = promisify(execFile);

describe('the rejects file', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-rejects-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes an input value that would start a spreadsheet formula after a quote, a negative number as it is', async () => {
    const file = new RejectsFile(join(dir, 'rejects', 'run.csv'));
    const codes = [
      '=HYPERLINK("http://evil.example/x","Xem chi tiết")',
      '+84912',
      '-2+3',
      '@SUM(A1)',
      '\tEX1',
      '\rEX1',
    ];
    for (const code of codes)
      await file.add({
        origin: 'đơn hàng.csv:2',
        orderCode: code,
        rejectCode: 'ORDERCODE_FORMAT_EXCEPTION',
        reason: code,
      });
    await file.add({ origin: '-stdin:3', orderCode: 'EX12', rejectCode: 'ORDERCODE_MIN_LENGTH', reason: 'quá ngắn' });
    // A negative number is a number to a spreadsheet, never a formula.
    await file.add({
      origin: 'số.csv:4',
      orderCode: '-1',
      rejectCode: 'ORDERCODE_FORMAT_EXCEPTION',
      reason: '-5.0000',
    });
    await file.close();

    const [header, ...rows] = parse(await readFile(file.path), { bom: true }) as string[][];
    expect(header).toEqual(['origin', 'order_code', 'reject_code', 'reason']);
    expect(rows).toEqual([
      ...codes.map((code) => ['đơn hàng.csv:2', `'${code}`, 'ORDERCODE_FORMAT_EXCEPTION', `'${code}`]),
      ["'-stdin:3", 'EX12', 'ORDERCODE_MIN_LENGTH', 'quá ngắn'],
      ['số.csv:4', '-1', 'ORDERCODE_FORMAT_EXCEPTION', '-5.0000'],
    ]);
  });
});

describe.skipIf(process.getuid?.() !== 0 && process.env.CI !== 'true')('the rejects file on a disk that fills', () => {
  it('ends in a disk fault naming the file, and leaves no half file', async () => {
    const disk = await mkdtemp(join(tmpdir(), 'parcel-recon-rejects-disk-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]);
    try {
      const path = join(disk, 'rejects', 'run.csv');
      const file = new RejectsFile(path);
      const writeMany = async () => {
        for (let row = 0; row < 20_000; row++)
          await file.add({
            origin: `orders.csv:${row}`,
            orderCode: null,
            rejectCode: 'UNREADABLE_ROW',
            reason: 'x'.repeat(80),
          });
        await file.close();
      };
      await expect(writeMany()).rejects.toMatchObject({
        code: 'DISK_FULL',
        message: `cannot write ${path}: no space left on the device`,
      });
      expect(await readdir(join(disk, 'rejects'))).toEqual([]);
    } finally {
      await run('umount', [disk]);
      await rm(disk, { recursive: true, force: true });
    }
  });
});
