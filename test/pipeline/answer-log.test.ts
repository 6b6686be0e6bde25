import { mkdir, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { CarrierInstant } from '../../src/carriers/247express/contract.js';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import {
  AnswerLogFile,
  readAnswerLog,
  readRawSpoolFile,
  spoolFilesOfRun,
  unfinishedSpoolFilesOfRun,
} from '../../src/pipeline/raw-spool.js';
import { ResultBatcher } from '../../src/pipeline/tracking/result-batcher.js';
import { salvageAnswers } from '../../src/pipeline/tracking/salvage-answers.js';
import { rowsOf, snapshotOf, trackingWire, useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();
const SEEN = '2026-11-20T15:00:00.000000Z' as CarrierInstant;
const NOW_MS = Date.parse('2026-11-20T15:00:00Z');
const sighting = (orderCode: string) => ({ runId: 'run-1', orderCode, accountAlias: 'shop-a', seenAt: SEEN });
const okLookup = (askedCode: string) =>
  ({ outcome: 'ok', askedCode, origin: 'orders.csv:2', attempts: 2, errorCode: null, errorMessage: null }) as const;
const errorLookup = (askedCode: string) =>
  ({
    outcome: 'carrier_error',
    askedCode,
    origin: 'orders.csv:3',
    attempts: 1,
    errorCode: 'ORDERCODE_NOT_FOUND',
    errorMessage: 'Không tìm thấy ,"answer": here',
  }) as const;
/** As a carrier may send it: Vietnamese text, escapes. */
const ESCAPED = '{"errorCode":"EXCEPTION","receiverName":"Nguyễn Thị Hương","note":"a \\"quoted\\" \\\\ \\u1ea1 text"}';
const snapshotBody = (orderCode: string) => Buffer.from(snapshotOf(trackingWire(orderCode)).body);

describe('answer log', () => {
  it('holds each answer on disk as it comes, under a partial name, whole once committed', async () => {
    const dataDir = await temp.dir();
    const log = new AnswerLogFile(dataDir, 'run-1');
    log.write(
      sighting('247EXP0001'),
      okLookup('247EXP0001'),
      Buffer.from('{"errorCode":null,\r\n "orderCode":"247EXP0001"}'),
    );
    log.write(sighting('247EXP0002'), errorLookup('247EXP0002'), Buffer.from('{"errorCode":"ORDERCODE_NOT_FOUND"}'));
    log.write(sighting('247EXP0003'), errorLookup('247EXP0003'), Buffer.alloc(0));
    log.write(sighting('247EXP0004'), { outcome: 'passed' }, Buffer.from(ESCAPED));

    // Before the batch ends, every answer is in the file, which no reader of finished files lists.
    const [partial] = await unfinishedSpoolFilesOfRun(dataDir, 'run-1');
    expect(await spoolFilesOfRun(dataDir, 'run-1')).toEqual([]);
    const logged = await readAnswerLog(partial!);
    expect(logged).toEqual(
      [
        {
          ...sighting('247EXP0001'),
          body: '{"errorCode":null,   "orderCode":"247EXP0001"}',
          lookup: okLookup('247EXP0001'),
        },
        { ...sighting('247EXP0002'), body: '{"errorCode":"ORDERCODE_NOT_FOUND"}', lookup: errorLookup('247EXP0002') },
        { ...sighting('247EXP0003'), body: 'null', lookup: errorLookup('247EXP0003') },
        { ...sighting('247EXP0004'), body: ESCAPED, lookup: { outcome: 'passed' } },
      ].map(({ runId: _runId, ...answer }) => answer),
    );

    const committed = await log.commit();
    const [file] = await spoolFilesOfRun(dataDir, 'run-1');
    expect(committed?.path).toBe(file!.path);
    expect(await unfinishedSpoolFilesOfRun(dataDir, 'run-1')).toEqual([]);
    // Replay reads the answers: a carrier error logged without one is none.
    expect((await readRawSpoolFile(file!.path)).map((answer) => answer.orderCode)).toEqual([
      '247EXP0001',
      '247EXP0002',
      '247EXP0004',
    ]);
  });

  it('reads the whole lines of a file a kill cut short', async () => {
    const dataDir = await temp.dir();
    const log = new AnswerLogFile(dataDir, 'run-1');
    for (let i = 1; i <= 3; i++)
      log.write(sighting(`247EXP000${i}`), okLookup(`247EXP000${i}`), snapshotBody(`247EXP000${i}`));
    log.close();
    const [partial] = await unfinishedSpoolFilesOfRun(dataDir, 'run-1');
    const length = (await readFile(partial!)).length;
    await truncate(partial!, length - 20);
    expect((await readAnswerLog(partial!)).map((answer) => answer.orderCode)).toEqual(['247EXP0001', '247EXP0002']);
  });

  it("compresses a committed batch's file for keeping, and reads a batch once when a kill left it both plain and compressed", async () => {
    const { warehouse, dir } = await temp.open();
    const batcher = new ResultBatcher(warehouse, 'run-1', join(dir, 'spool'), dir, () => NOW_MS, DEFAULT_CARRIER_ID);
    for (const code of ['ORDER0001', 'ORDER0002'])
      batcher.add(
        code,
        'shop-a',
        'a.csv:2',
        { kind: 'ok', orderCode: code, body: snapshotBody(code), attempts: 1 },
        false,
      );
    await batcher.finish();
    const folder = join(dir, 'raw', 'run-1');
    const [name] = await readdir(folder);
    expect(await readdir(folder)).toEqual([expect.stringMatching(/^\d{13}-\d+-\d+\.ndjson\.gz$/)]);
    const compressed = join(folder, name!);
    const lines = gunzipSync(await readFile(compressed))
      .toString('utf8')
      .split('\n');
    expect(lines.map((line) => (line === '' ? '' : JSON.parse(line).orderCode))).toEqual([
      'ORDER0001',
      'ORDER0002',
      '',
    ]);

    // A kill after the compressed file was named, before the plain one went: both are there.
    const plain = compressed.slice(0, -'.gz'.length);
    await writeFile(plain, lines.join('\n'));
    const files = await spoolFilesOfRun(dir, 'run-1');
    expect(files.map((file) => file.path)).toEqual([compressed]);
    expect((await readRawSpoolFile(plain)).map((answer) => answer.orderCode)).toEqual(['ORDER0001', 'ORDER0002']);
    // A plain file alone, compressed since it was listed, is read compressed.
    await rm(plain);
    expect((await readRawSpoolFile(plain)).map((answer) => answer.orderCode)).toEqual(['ORDER0001', 'ORDER0002']);
    expect((await readAnswerLog(plain)).map((answer) => answer.orderCode)).toEqual(['ORDER0001', 'ORDER0002']);

    // A committed batch's file a kill left plain is compressed by the resumed run, its answers not loaded again.
    await writeFile(plain, lines.join('\n'));
    await rm(compressed);
    expect(
      await salvageAnswers({
        warehouse,
        runId: 'run-1',
        scratchDir: join(dir, 'spool'),
        dataDir: dir,
        now: () => NOW_MS,
        carrier: DEFAULT_CARRIER_ID,
      }),
    ).toBe(0);
    expect(await readdir(folder)).toEqual([name]);
    expect(gunzipSync(await readFile(compressed)).toString('utf8')).toBe(lines.join('\n'));
    // One a kill left both plain and compressed: the plain file goes.
    await writeFile(plain, lines.join('\n'));
    const resume = {
      warehouse,
      runId: 'run-1',
      scratchDir: join(dir, 'spool'),
      dataDir: dir,
      now: () => NOW_MS,
      carrier: DEFAULT_CARRIER_ID,
    };
    expect(await salvageAnswers(resume)).toBe(0);
    expect(await readdir(folder)).toEqual([name]);
  });

  it('leaves no file for a batch without answers', async () => {
    const dataDir = await temp.dir();
    expect(await new AnswerLogFile(dataDir, 'run-1').commit()).toBeUndefined();
    expect(await spoolFilesOfRun(dataDir, 'run-1')).toEqual([]);
  });

  it('replay reads a spool file as the previous release wrote it: one gzip stream of lines without outcomes', async () => {
    const dataDir = await temp.dir();
    const lines = ['247EXP0001', '247EXP0002'].map(
      (code) =>
        `{"runId":"run-0","orderCode":"${code}","accountAlias":"shop-a","seenAt":"${SEEN}","answer":${snapshotBody(code).toString()}}\n`,
    );
    const folder = join(dataDir, 'raw', 'run-0');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, '1763650800000-4242-000000001.ndjson.gz'), gzipSync(lines.join(''), { level: 1 }));
    const [file] = await spoolFilesOfRun(dataDir, 'run-0');
    const read = await readRawSpoolFile(file!.path);
    expect(read.map((answer) => [answer.orderCode, answer.lookup, JSON.parse(answer.body).orderCode])).toEqual([
      ['247EXP0001', undefined, '247EXP0001'],
      ['247EXP0002', undefined, '247EXP0002'],
    ]);
  });
});

describe('salvage of a killed process', () => {
  it('loads the answers of the unfinished file and of the finished file whose batch never committed, keeping every answer once', async () => {
    const { warehouse, dir } = await temp.open();
    const spoolDir = join(dir, 'spool');
    // A committed batch.
    const batcher = new ResultBatcher(warehouse, 'run-1', spoolDir, dir, () => NOW_MS, DEFAULT_CARRIER_ID);
    batcher.add(
      'ORDER0001',
      'shop-a',
      'a.csv:2',
      { kind: 'ok', orderCode: 'ORDER0001', body: snapshotBody('ORDER0001'), attempts: 1 },
      false,
    );
    await batcher.finish();
    // A batch whose file was finished when the kill came, its load never done.
    const finished = new AnswerLogFile(dir, 'run-1');
    finished.write(sighting('ORDER0002'), okLookup('ORDER0002'), snapshotBody('ORDER0002'));
    finished.write(sighting('ORDER0002'), { outcome: 'passed' }, Buffer.from('{"errorCode":"EXCEPTION"}'));
    await finished.commit();
    // The batch gathering at the kill.
    const gathering = new AnswerLogFile(dir, 'run-1');
    gathering.write(sighting('ORDER0003'), okLookup('ORDER0003'), snapshotBody('ORDER0003'));
    gathering.write(sighting('ORDER0004'), errorLookup('ORDER0004'), Buffer.alloc(0));
    gathering.close();

    const salvaged = await salvageAnswers({
      warehouse,
      runId: 'run-1',
      scratchDir: spoolDir,
      dataDir: dir,
      now: () => NOW_MS,
      carrier: DEFAULT_CARRIER_ID,
    });
    expect(salvaged).toBe(3);
    const results = await rowsOf(
      warehouse,
      `SELECT order_code, outcome, attempts, origin FROM lookup_results ORDER BY order_code`,
    );
    expect(results).toEqual([
      { order_code: 'ORDER0001', outcome: 'ok', attempts: 1, origin: 'a.csv:2' },
      { order_code: 'ORDER0002', outcome: 'ok', attempts: 2, origin: 'orders.csv:2' },
      { order_code: 'ORDER0003', outcome: 'ok', attempts: 2, origin: 'orders.csv:2' },
      { order_code: 'ORDER0004', outcome: 'carrier_error', attempts: 1, origin: 'orders.csv:3' },
    ]);
    expect(await rowsOf(warehouse, 'SELECT order_code FROM orders ORDER BY order_code')).toEqual(
      ['ORDER0001', 'ORDER0002', 'ORDER0003'].map((order_code) => ({ order_code })),
    );
    // Every answer is in the spool once: the cut-off files went, their answers written again.
    expect(await unfinishedSpoolFilesOfRun(dir, 'run-1')).toEqual([]);
    const spooled: string[] = [];
    for (const file of await spoolFilesOfRun(dir, 'run-1'))
      for (const answer of await readRawSpoolFile(file.path))
        spooled.push(`${answer.orderCode} ${answer.lookup?.outcome}`);
    expect(spooled.sort()).toEqual(['ORDER0001 ok', 'ORDER0002 ok', 'ORDER0002 passed', 'ORDER0003 ok']);
    // A second resume finds nothing left to load.
    expect(
      await salvageAnswers({
        warehouse,
        runId: 'run-1',
        scratchDir: spoolDir,
        dataDir: dir,
        now: () => NOW_MS,
        carrier: DEFAULT_CARRIER_ID,
      }),
    ).toBe(0);
  });
});
