/**
 * Money and times as finance reads them (the built CLI over a synthetic warehouse): the summary lists
 * the checks by money at stake, the rest counted on one line; whole dong without decimals; times in
 * the display time zone with their offset in CSV, JSON and the page, as date cells in a workbook; a
 * negative partner amount is a number; an --account that matches no order is a warning.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { refreshChargeAudit } from '../../src/warehouse/charge-audit-rows.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';
import { fileOf } from './report-fixtures.js';

const NOW = { PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' };
const RANGE = ['--from', '2026-10-01', '--to', '2026-12-31'];

interface WrittenFile {
  table: string;
  path: string;
  rows: number;
}

interface CheckFigure {
  check_name: string;
  orders_flagged: number;
  amount_at_stake: string;
}

async function csvRecords(path: string): Promise<Record<string, string>[]> {
  return parse(await readFile(path), { bom: true, columns: true }) as Record<string, string>[];
}

/** An instant's wall time and offset in a zone, as Intl gives them: `2026-11-20T08:15:30+07:00`. */
function wallTime(epochMs: number, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(epochMs)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName!.slice(3);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

describe('money and times as finance reads them', () => {
  let dir: string;
  let dbPath: string;
  let partnerCsv: string;
  /** Each order's accept date, epoch ms. */
  let acceptedAt: Map<string, number>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-money-'));
    dbPath = join(dir, 'recon.duckdb');
    partnerCsv = join(dir, 'partner.csv');
    await buildSyntheticWarehouse(dbPath, 3_000, partnerCsv);
    const warehouse = await Warehouse.open(dbPath);
    try {
      // Many orders with a weight off (no money) and a fuel fee 2 dong off: checks that flag more orders
      // than the few returns charged without a return, which put far more money at stake.
      await warehouse.run("UPDATE orders SET cal_weight = cal_weight + 1 WHERE right(order_code, 1) = '7'");
      await warehouse.run(
        "UPDATE orders SET fuel_fee_amount = fuel_fee_amount + 2 WHERE right(order_code, 2) IN ('21', '41', '61')",
      );
      await refreshChargeAudit(warehouse);
      acceptedAt = new Map(
        (
          (await warehouse.readAll('SELECT order_code, epoch_ms(accept_date) AS ms FROM orders')).getRowObjectsJS() as {
            order_code: string;
            ms: bigint;
          }[]
        ).map((r) => [r.order_code, Number(r.ms)]),
      );
    } finally {
      await warehouse.close();
    }
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function report(args: string[], env: Record<string, string> = {}) {
    const out = join(dir, `out-${args.join('-').replace(/[^a-z0-9]+/gi, '_')}`);
    const result = await cli(['report', ...args, '--db', dbPath, ...RANGE, '--out', out], { ...NOW, ...env });
    expect(result.code, result.stderr).toBe(0);
    return result;
  }

  it('lists the checks by money at stake, the largest even with few orders, and counts the rest', async () => {
    const json = await report(['charges', '--json']);
    const figures = (JSON.parse(json.stdout) as { figures: { checks: CheckFigure[] } }).figures.checks.map((c) => ({
      ...c,
      orders_flagged: Number(c.orders_flagged),
    }));
    const flagged = figures.filter((c) => c.check_name !== 'any' && Number(c.orders_flagged) > 0);
    const byMoney = [...flagged].sort(
      (a, b) => Number(b.amount_at_stake) - Number(a.amount_at_stake) || b.orders_flagged - a.orders_flagged,
    );
    const byOrders = [...flagged].sort((a, b) => b.orders_flagged - a.orders_flagged);
    // The second largest sum at stake is on few orders: five checks flag more.
    const returns = flagged.find((c) => c.check_name === 'return_not_returned')!;
    expect(byMoney[1]).toBe(returns);
    expect(byOrders.indexOf(returns)).toBeGreaterThanOrEqual(5);
    expect(flagged.length).toBeGreaterThan(5);
    // Whole dong, without the decimals of the DECIMAL column.
    for (const check of figures) expect(check.amount_at_stake).toMatch(/^\d+$/);

    const printed = (await report(['charges'])).stdout.split('\n').map((l) => l.trim());
    const vnd = (amount: string | number) => Number(amount).toLocaleString('en-US');
    const money = (c: CheckFigure) =>
      ['cal_weight', 'chargeable_weight'].includes(c.check_name) ? '' : `, ${vnd(c.amount_at_stake)} VND`;
    const rest = byMoney.slice(5);
    const any = figures.find((c) => c.check_name === 'any')!;
    expect(printed.slice(1, 8)).toEqual([
      `3000 orders checked, ${any.orders_flagged} flagged, ${vnd(any.amount_at_stake)} VND at stake`,
      ...byMoney.slice(0, 5).map((c) => `${c.check_name}: ${c.orders_flagged} orders${money(c)}`),
      `and ${rest.length} more checks: ${rest.reduce((n, c) => n + c.orders_flagged, 0)} orders, ${vnd(
        rest.reduce((sum, c) => sum + Number(c.amount_at_stake), 0),
      )} VND`,
    ]);
    expect(printed.join('\n')).not.toMatch(/\d\.0000/);
  });

  it('writes CSV and JSON times in Asia/Ho_Chi_Minh with their offset, or in the zone set', async () => {
    const first = (result: { stdout: string }, table: string) =>
      (JSON.parse(result.stdout) as { files: WrittenFile[] }).files.find((f) => f.table === table)!.path;
    const checkCsv = async (zone: string, env: Record<string, string>, flags: string[] = []) => {
      const rows = await csvRecords(first(await report(['charges', '--json', ...flags], env), 'charges'));
      expect(rows).toHaveLength(3000);
      for (const row of rows.slice(0, 200))
        expect(row.accept_date, row.order_code).toBe(wallTime(acceptedAt.get(row.order_code!)!, zone));
      return rows;
    };
    const carrier = await checkCsv('Asia/Ho_Chi_Minh', {});
    expect(carrier[0]!.accept_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00$/);
    // A zone with daylight saving: October's times at +02:00, November's at +01:00.
    const berlin = await checkCsv('Europe/Berlin', { PARCEL_RECON_TIME_ZONE: 'Europe/Berlin' });
    const offsets = new Set(berlin.map((r) => r.accept_date!.slice(19)));
    expect([...offsets].sort()).toEqual(['+01:00', '+02:00']);
    await checkCsv('America/Sao_Paulo', { PARCEL_RECON_TIME_ZONE: 'Europe/Berlin' }, [
      '--time-zone',
      'America/Sao_Paulo',
    ]);

    const failures = await report(['failures', '--json', '--format', 'json']);
    const attempts = JSON.parse(await readFile(first(failures, 'failures'), 'utf8')) as { attempted_at: string }[];
    expect(attempts.length).toBeGreaterThan(0);
    for (const attempt of attempts)
      expect(attempt.attempted_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00$/);

    const wrong = await cli(['report', 'charges', '--db', dbPath, '--time-zone', 'Mars/Olympus'], NOW);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toContain('--time-zone: "Mars/Olympus" is not a time zone');
  });

  it('holds date cells in the zone, named in the header, and whole dong as numbers without decimals', async () => {
    for (const zone of ['Asia/Ho_Chi_Minh', 'America/New_York']) {
      const result = await report(['charges', '--json', '--format', 'xlsx', '--time-zone', zone]);
      const path = fileOf((JSON.parse(result.stdout) as { files: WrittenFile[] }).files, 'charges').path;
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(path);
      const sheet = workbook.getWorksheet('charges')!;
      const header = (sheet.getRow(1).values as string[]).slice(1);
      const column = (name: string) => header.indexOf(name) + 1;
      expect(column(`accept_date (${zone})`)).toBeGreaterThan(0);
      for (let r = 2; r <= 50; r++) {
        const row = sheet.getRow(r);
        const code = String(row.getCell(column('order_code')).value);
        const cell = row.getCell(column(`accept_date (${zone})`));
        expect(cell.value).toBeInstanceOf(Date);
        // The cell holds the wall time in the zone (a spreadsheet's dates have no zone).
        const wall = wallTime(acceptedAt.get(code)!, zone);
        expect((cell.value as Date).toISOString().slice(0, 19), code).toBe(wall.slice(0, 19));
        const total = row.getCell(column('total_service_cost'));
        expect(typeof total.value).toBe('number');
        expect(Number.isInteger(total.value)).toBe(true);
        expect(total.numFmt).toBe('#,##0 "VND"');
      }
    }
  });

  it('writes a negative partner amount as a number, in CSV and in a workbook', async () => {
    const lines = (await readFile(partnerCsv, 'utf8')).split('\n');
    const [code] = lines[1]!.split(',');
    lines[1] = `${code},30,-5,`;
    const partner = join(dir, 'negative-partner.csv');
    await writeFile(partner, lines.join('\n'));

    const csv = await report(['reconcile', '--json', '--partner', partner]);
    const file = fileOf((JSON.parse(csv.stdout) as { files: WrittenFile[] }).files, 'reconcile').path;
    const finding = (await csvRecords(file)).find((r) => r.order_code === code && r.finding === 'invoice_mismatch')!;
    expect(finding.partner_value).toBe('-5.0000');
    expect(finding.difference).toMatch(/^-\d+\.\d{4}$/);

    const xlsx = await report(['reconcile', '--json', '--partner', partner, '--format', 'xlsx']);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(fileOf((JSON.parse(xlsx.stdout) as { files: WrittenFile[] }).files, 'reconcile').path);
    const sheet = workbook.getWorksheet('reconcile')!;
    const header = (sheet.getRow(1).values as string[]).slice(1);
    let found = false;
    sheet.eachRow((row) => {
      if (row.getCell(header.indexOf('order_code') + 1).value !== code) return;
      if (row.getCell(header.indexOf('finding') + 1).value !== 'invoice_mismatch') return;
      found = true;
      expect(row.getCell(header.indexOf('partner_value') + 1).value).toBe(-5);
      expect(row.getCell(header.indexOf('carrier_value') + 1).numFmt).toBe('#,##0 "VND"');
    });
    expect(found).toBe(true);
  });

  it('shows the page in the zone and its checks by money at stake', async () => {
    const out = join(dir, 'page.html');
    const result = await cli(['report', 'html', '--db', dbPath, ...RANGE, '--out', out], NOW);
    expect(result.code, result.stderr).toBe(0);
    const html = await readFile(out, 'utf8');
    expect(html).toContain('made 2026-12-05T12:00:00+07:00');
    expect(html).not.toMatch(/\d{2}:\d{2}:\d{2}(\.\d+)?\+00\b/);
    expect(html).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00/);
    // The findings table: `any`, then cancelled_charged (the most money), then return_not_returned.
    const table = html.slice(html.indexOf('data-table="charges-summary"'));
    const order = ['>any<', '>cancelled_charged<', '>return_not_returned<', '>lines_sum<', '>cal_weight<'].map((c) =>
      table.indexOf(c),
    );
    for (const at of order) expect(at).toBeGreaterThan(0);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('warns when --account matches no order, naming the accounts, and exits as before', async () => {
    const outs = [
      ['charges', '--out', join(dir, 'nobody')],
      ['failures', '--out', join(dir, 'nobody')],
      ['html', '--out', join(dir, 'nobody.html')],
    ];
    for (const sub of outs) {
      const result = await cli(['report', ...sub, '--db', dbPath, '--account', 'nobody'], NOW);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr.trim().split('\n')).toEqual([
        "parcel-recon: warning: --account nobody matches no order; the warehouse's accounts: shop-0, shop-1, shop-2, shop-3, shop-4",
      ]);
    }
    const known = await cli(
      ['report', 'charges', '--db', dbPath, '--out', join(dir, 'shop-1'), '--account', 'shop-1'],
      NOW,
    );
    expect(known.code).toBe(0);
    expect(known.stderr).toBe('');
  });
});
