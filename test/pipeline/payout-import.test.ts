/**
 * A payout statement imported into a real DuckDB file: lines that conflict with the lines before them
 * are rejected, and a statement with a rejected line corrects and adds lines but removes none.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importPayoutStatement } from '../../src/pipeline/payout-import.js';
import { payoutLayout, TEMPLATE_LAYOUTS } from '../../src/sources/payout-layouts.js';
import type { Warehouse } from '../../src/warehouse/warehouse.js';
import { rowsOf, useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();
const GHN = payoutLayout('ghn', TEMPLATE_LAYOUTS.get('ghn')!);
const HEADER =
  'Mã phiên COD;Ngày chuyển COD;Mã đơn GHN;Loại giao dịch;Tiền thu hộ;Phí dịch vụ;Phí khai giá;Phí thu hộ;Phí hoàn hàng;Phí giao lại;Công nợ;Thực nhận;Tổng tiền phiên';
const NOW_MS = Date.parse('2026-11-28T01:00:00Z');

async function importText(warehouse: Warehouse, dir: string, name: string, lines: string[]) {
  const file = join(dir, name);
  await writeFile(file, [HEADER, ...lines].join('\n'));
  const summary = await importPayoutStatement({
    warehouse,
    source: { kind: 'csv', file },
    carrier: 'ghn',
    layout: GHN,
    dataDir: dir,
    nowMs: NOW_MS,
    dryRun: false,
  });
  return { file, summary };
}

async function storedLines(warehouse: Warehouse) {
  return rowsOf(
    warehouse,
    'SELECT batch_id, order_code, line_kind, net_paid FROM payout_lines ORDER BY batch_id, order_code, line_kind',
  );
}

describe('importPayoutStatement', () => {
  it('rejects a second line of one identity, and a line whose batch date or total differs from its batch', async () => {
    const { warehouse, dir } = await temp.open();
    const { file, summary } = await importText(warehouse, dir, 'conflicts.csv', [
      'G1;12/11/2026;GA1;Thu hộ;100.000;10.000;0;0;0;0;0;90.000;120.000',
      'G1;12/11/2026;GA1;thu ho;100.000;10.000;0;0;0;0;0;90.000;120.000',
      'G1;12/11/2026;GA1;Công nợ;0;0;0;0;20.000;0;20.000;-20.000;120.000',
      'G1;13/11/2026;GA2;Thu hộ;50.000;0;0;0;0;0;0;50.000;120.000',
      'G1;12/11/2026;GA3;Thu hộ;50.000;0;0;0;0;0;0;50.000;125.000',
    ]);
    expect(summary).toMatchObject({ linesRead: 5, imported: 2, unchanged: 0, rejected: 3 });
    expect(summary.rejections).toEqual([
      {
        origin: `${file}:3`,
        orderCode: 'GA1',
        rejectCode: 'CONFLICTING_LINE',
        reason: `batch G1 holds a cod line of order GA1 already (${file}:2)`,
      },
      {
        origin: `${file}:5`,
        orderCode: 'GA2',
        rejectCode: 'CONFLICTING_LINE',
        reason: `batch G1 is dated 2026-11-12 (${file}:2), this line 2026-11-13`,
      },
      {
        origin: `${file}:6`,
        orderCode: 'GA3',
        rejectCode: 'CONFLICTING_LINE',
        reason: `batch G1 states a total of 120000 (${file}:2), this line 125000`,
      },
    ]);
    expect(await readFile(summary.rejectsFile!, 'utf8')).toContain(
      `${file}:3,GA1,CONFLICTING_LINE,batch G1 holds a cod line of order GA1 already (${file}:2)`,
    );
    expect(await storedLines(warehouse)).toEqual([
      { batch_id: 'G1', order_code: 'GA1', line_kind: 'cod', net_paid: '90000' },
      { batch_id: 'G1', order_code: 'GA1', line_kind: 'debt', net_paid: '-20000' },
    ]);
  });

  it('with a rejected line corrects and adds lines but removes no stored one; once clean, replaces the batch whole', async () => {
    const { warehouse, dir } = await temp.open();
    await importText(warehouse, dir, 'first.csv', [
      'G2;12/11/2026;GB1;Thu hộ;100.000;10.000;0;0;0;0;0;90.000;',
      'G2;12/11/2026;GB2;Thu hộ;100.000;10.000;0;0;0;0;0;90.000;',
    ]);
    const withRejection = await importText(warehouse, dir, 'second.csv', [
      'G2;12/11/2026;GB1;Thu hộ;100.000;12.000;0;0;0;0;0;88.000;',
      'G2;12/11/2026;GB3;Thu hộ;xxx;0;0;0;0;0;0;0;',
    ]);
    expect(withRejection.summary).toMatchObject({ imported: 1, batchesReplaced: 1, linesReplaced: 1, rejected: 1 });
    expect(await storedLines(warehouse)).toEqual([
      { batch_id: 'G2', order_code: 'GB1', line_kind: 'cod', net_paid: '88000' },
      { batch_id: 'G2', order_code: 'GB2', line_kind: 'cod', net_paid: '90000' },
    ]);
    const clean = await importText(warehouse, dir, 'third.csv', [
      'G2;12/11/2026;GB1;Thu hộ;100.000;12.000;0;0;0;0;0;88.000;',
    ]);
    expect(clean.summary).toMatchObject({ imported: 0, unchanged: 1, batchesReplaced: 1, linesReplaced: 1 });
    expect(await storedLines(warehouse)).toEqual([
      { batch_id: 'G2', order_code: 'GB1', line_kind: 'cod', net_paid: '88000' },
    ]);
    expect(
      await rowsOf(warehouse, 'SELECT order_code, net_paid FROM payout_line_history ORDER BY replaced_at, order_code'),
    ).toEqual([
      { order_code: 'GB1', net_paid: '90000' },
      { order_code: 'GB2', net_paid: '90000' },
    ]);
  });
});
