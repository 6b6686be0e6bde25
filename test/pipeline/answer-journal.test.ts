import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CarrierInstant } from '../../src/carrier/contract.js';
import { AnswerJournal, journalFiles, readJournals } from '../../src/pipeline/tracking/answer-journal.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const SEEN = '2026-11-20T15:00:00.000000Z' as CarrierInstant;
const lookup = (askedCode: string, kind: 'ok' | 'carrier_error') => ({
  askedCode,
  accountAlias: 'shop-a',
  origin: 'orders.csv:2',
  attempts: 2,
  seenAt: SEEN,
  kind,
  orderCode: askedCode,
  errorCode: kind === 'ok' ? null : 'ORDERCODE_NOT_FOUND',
  errorMessage: kind === 'ok' ? null : 'Không tìm thấy ,"answer": here',
});

describe('answer journal', () => {
  it('gives back every whole line as written, the last answer of a code, and leaves a torn last line out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'answer-journal-'));
    dirs.push(dir);
    const journal = new AnswerJournal(dir);
    journal.write(lookup('247EXP0001', 'ok'), Buffer.from('{"errorCode":null,\r\n "orderCode":"247EXP0001"}'));
    journal.write(lookup('247EXP0002', 'carrier_error'), Buffer.from('{"errorCode":"ORDERCODE_NOT_FOUND"}'));
    journal.write(lookup('247EXP0001', 'ok'), Buffer.from('{"errorCode":null,"orderCode":"247EXP0001","v":2}'));
    journal.close();
    const [file] = await journalFiles(dir);
    await appendFile(file!, '{"askedCode":"247EXP0003","accountAlias":"shop-a","ori');

    const answers = await readJournals(await journalFiles(dir));
    expect(answers).toEqual([
      { ...lookup('247EXP0001', 'ok'), body: '{"errorCode":null,"orderCode":"247EXP0001","v":2}' },
      { ...lookup('247EXP0002', 'carrier_error'), body: '{"errorCode":"ORDERCODE_NOT_FOUND"}' },
    ]);
    const again = new AnswerJournal(dir);
    again.write(lookup('247EXP0004', 'ok'), Buffer.from('{"errorCode":null,\n"orderCode":"247EXP0004"}'));
    const fourth = (await readJournals(await journalFiles(dir))).find((answer) => answer.askedCode === '247EXP0004');
    // Line breaks between the answer's tokens become spaces: one answer, one line.
    expect(fourth?.body).toBe('{"errorCode":null, "orderCode":"247EXP0004"}');
    await again.remove();
    expect(await journalFiles(dir)).toHaveLength(1);
  });
});
