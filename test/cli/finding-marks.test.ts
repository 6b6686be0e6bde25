/**
 * `findings mark|import|list` run as finance runs them, with the built CLI against a real DuckDB file:
 * a COD finding marked settled stays settled in the next `report cod`, visible with its note, its
 * money no longer at stake; a mark replaced keeps the old one in the history; the report's own CSV
 * and workbook read back with the mark column filled in mark their findings, row by row.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonRows } from '../reports/report-fixtures.js';
import { cli } from '../support/cli-process.js';
import { buildCodWarehouse, NOW } from './cod-warehouse.js';

let dir: string;
let built: string;
let config: string;
let copies = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parcel-recon-marks-'));
  ({ db: built, config } = await buildCodWarehouse(dir));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the built warehouse for one test: marks change it. */
async function freshWarehouse(): Promise<string> {
  const db = join(dir, `marks-${++copies}.duckdb`);
  await copyFile(built, db);
  return db;
}

const LATER = '2026-11-29T09:30:00+07:00';

function findings(db: string, ...args: string[]) {
  return cli(['findings', ...args, '--db', db, '--config', config], { PARCEL_RECON_NOW: LATER });
}

interface Summary {
  readonly files: { table: string; path: string; rows: number }[];
  readonly figures: {
    findings: Record<string, number>;
    atStake: Record<string, string>;
    settled: Record<string, number>;
  };
}

async function codReport(db: string, format = 'json'): Promise<{ summary: Summary; text: string }> {
  const out = join(dir, `report-${++copies}`);
  const args = ['report', 'cod', '--db', db, '--config', config, '--format', format, '--out', out];
  const run = await cli([...args, '--json'], { PARCEL_RECON_NOW: NOW });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const printed = await cli(args, { PARCEL_RECON_NOW: NOW });
  return { summary: JSON.parse(run.stdout) as Summary, text: printed.stdout };
}

async function findingRows(summary: Summary): Promise<Record<string, unknown>[]> {
  return readJsonRows(summary.files.find((f) => f.table === 'cod')!.path);
}

describe('findings mark', () => {
  it('keeps a settled finding settled in the next reports: shown with its note, its money not at stake', async () => {
    const db = await freshWarehouse();
    const marked = await findings(
      db,
      'mark',
      '--check',
      'fees_withheld',
      '--order',
      'EXF0001',
      '--as',
      'settled',
      '--note',
      'carrier refunded 20,000 on 2026-11-27',
      '--by',
      'lan',
    );
    expect(marked.stderr).toBe('');
    expect(marked.stdout).toBe(
      'findings: 1 marked, 0 marked again (the marks replaced kept in the history), 0 unchanged, 0 rejected\n',
    );
    for (const run of [1, 2]) {
      const { summary, text } = await codReport(db);
      const rows = await findingRows(summary);
      expect(rows, `report ${run}`).toHaveLength(8);
      const settled = rows.find((r) => r.finding === 'fees_withheld')!;
      expect([
        settled.order_code,
        Number(settled.at_stake),
        Number(settled.open_at_stake),
        settled.mark,
        settled.mark_note,
        settled.marked_by,
        Number(settled.marked_at_stake),
      ]).toEqual(['EXF0001', 20_000, 0, 'settled', 'carrier refunded 20,000 on 2026-11-27', 'lan', 20_000]);
      expect(String(settled.marked_at)).toMatch(/^2026-11-29T09:30:00(\.000)?\+07:00$/);
      // The settled finding is last: the open ones by money first.
      expect(rows.at(-1)!.finding).toBe('fees_withheld');
      expect(rows.filter((r) => r.mark !== null)).toHaveLength(1);
      expect(summary.figures.findings.fees_withheld).toBe(1);
      expect(summary.figures.settled.fees_withheld).toBe(1);
      expect(summary.figures.atStake.fees_withheld).toBe('0');
      expect(summary.figures.atStake.batch_total).toBe('20000');
      expect(text).toContain('\n  and 3 more checks: 3 findings, 20,800 VND\n');
      const perCheck = await readJsonRows(summary.files.find((f) => f.table === 'cod-summary')!.path);
      expect(perCheck.find((r) => r.check_name === 'fees_withheld' && r.carrier === '*')).toMatchObject({
        findings: 1,
        settled: 1,
        at_stake: 0,
      });
    }
  });

  it('refuses, in one line, a finding the report does not find, or one named by what its check lacks', async () => {
    const db = await freshWarehouse();
    const clean = await findings(
      db,
      'mark',
      '--check',
      'fees_withheld',
      '--order',
      'EXC0001',
      '--as',
      'settled',
      '--note',
      'x',
    );
    expect([clean.code, clean.stderr]).toEqual([
      2,
      'parcel-recon: the cod report finds no fees_withheld of 247express order EXC0001\n',
    ]);
    const shape = await findings(
      db,
      'mark',
      '--check',
      'batch_total',
      '--order',
      'P1',
      '--as',
      'settled',
      '--note',
      'x',
    );
    expect([shape.code, shape.stderr]).toEqual([
      2,
      'parcel-recon: batch_total: a finding of a batch (--batch); give that alone\n',
    ]);
    const check = await findings(db, 'mark', '--check', 'fees', '--order', 'EXF0001', '--as', 'settled', '--note', 'x');
    expect(check.code).toBe(2);
    expect(check.stderr).toMatch(/^parcel-recon: --check: fees is no COD check; the checks are unpaid_delivered, /);
    const list = await findings(db, 'list', '--history');
    expect(list).toMatchObject({ code: 0, stdout: '' });
  });

  it('replaces a mark, keeping the one it replaced in the history; --dry-run changes nothing', async () => {
    const db = await freshWarehouse();
    const batch = ['mark', '--check', 'batch_total', '--batch', 'P1', '--by', 'lan'];
    expect((await findings(db, ...batch, '--as', 'disputed', '--note', 'claim 112 sent')).code).toBe(0);
    const dry = await findings(db, ...batch, '--as', 'settled', '--note', 'credited in P4', '--dry-run');
    expect(dry.stdout).toBe(
      'dry run, nothing changed: findings: 0 would be marked, 1 would be marked again (the marks replaced kept in the history), 0 unchanged, 0 rejected\n',
    );
    const again = await findings(db, ...batch, '--as', 'disputed', '--note', 'claim 112 sent');
    expect(again.stdout).toContain(', 1 unchanged, ');
    expect((await findings(db, ...batch, '--as', 'settled', '--note', 'credited in P4')).code).toBe(0);
    const list = await findings(db, 'list', '--history', '--json');
    const marks = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(marks.map((m) => [m.finding, m.batchId, m.orderCode, m.mark, m.note, m.markedBy, m.atStake])).toEqual([
      ['batch_total', 'P1', '', 'settled', 'credited in P4', 'lan', 20_000],
      ['batch_total', 'P1', '', 'disputed', 'claim 112 sent', 'lan', 20_000],
    ]);
    expect(marks.map((m) => m.replacedAt)).toEqual([null, '2026-11-29T09:30:00+07:00']);
  });

  it('counts a settled finding again once its amount has moved since', async () => {
    const db = await freshWarehouse();
    const mark = ['mark', '--check', 'fees_withheld', '--order', 'EXF0001', '--as', 'settled', '--note', 'refunded'];
    expect((await findings(db, ...mark)).code).toBe(0);
    // A corrected P2: 30,000 more withheld from EXF0001 than it said (and its net 30,000 less).
    const corrected = join(dir, 'p2-corrected.csv');
    const p2 = await readFile(join(dir, 'p2.csv'), 'utf8');
    await writeFile(
      corrected,
      p2.replace(
        'EXF0001,Thu hộ,600.000,50.000,0,6.000,3.600,0,0,540.400',
        'EXF0001,Thu hộ,600.000,80.000,0,6.000,3.600,0,0,510.400',
      ),
    );
    const imported = await cli(['payouts', 'import', '--db', db, '--config', config, corrected], {
      PARCEL_RECON_NOW: NOW,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const { summary } = await codReport(db);
    const fees = (await findingRows(summary)).find((r) => r.finding === 'fees_withheld')!;
    expect([Number(fees.at_stake), Number(fees.open_at_stake), fees.mark, Number(fees.marked_at_stake)]).toEqual([
      50_000,
      50_000,
      'settled',
      20_000,
    ]);
    expect(summary.figures.settled.fees_withheld).toBe(0);
    expect(summary.figures.atStake.fees_withheld).toBe('50000');
  });
});

describe('findings import', () => {
  it("marks the findings of the report's own CSV rows with a mark, rejecting a row that names no finding", async () => {
    const db = await freshWarehouse();
    const { summary } = await codReport(db, 'csv');
    const file = summary.files.find((f) => f.table === 'cod')!.path;
    const rows = parse(await readFile(file), { columns: true, bom: true }) as Record<string, string>[];
    for (const row of rows) {
      if (row.finding === 'paid_twice') Object.assign(row, { mark: 'disputed', mark_note: '-800,000: claim 7' });
      if (row.finding === 'line_net') Object.assign(row, { mark: 'Settled', mark_note: 'paid in P3' });
      if (row.finding === 'batch_net') Object.assign(row, { mark: 'paid', mark_note: 'x' });
    }
    rows.push({ ...rows[0]!, finding: 'fees_withheld', order_code: 'EXC0002', mark: 'settled', mark_note: 'x' });
    const marked = join(dir, 'marked.csv');
    await writeFile(marked, stringify(rows, { header: true }));
    const dry = await findings(db, 'import', marked, '--dry-run');
    expect(dry.stdout.split('\n')[0]).toBe(
      'dry run, nothing changed: findings: 2 would be marked, 0 would be marked again (the marks replaced kept in the history), 0 unchanged, 5 rows without a mark left as they are, 2 rejected',
    );
    expect((await findings(db, 'list')).stdout).toBe('');
    const run = await findings(db, 'import', marked, '--by', 'lan');
    expect(run.stderr).toBe('');
    const batchNetLine = rows.findIndex((r) => r.finding === 'batch_net') + 2;
    expect(run.stdout.split('\n').slice(1)).toEqual([
      `  ${marked}:${batchNetLine}: column "mark": "paid" is not a mark; the marks are disputed, settled, open`,
      `  ${marked}:${rows.length + 1}: the cod report finds no fees_withheld of 247express order EXC0002`,
      '',
    ]);
    const after = await findingRows((await codReport(db)).summary);
    expect(after.filter((r) => r.mark !== null).map((r) => [r.finding, r.mark, r.mark_note])).toEqual([
      ['paid_twice', 'disputed', '-800,000: claim 7'],
      ['line_net', 'settled', 'paid in P3'],
    ]);
    // The report written again, and read back as it is, changes nothing.
    const again = await codReport(db, 'csv');
    const unchanged = await findings(db, 'import', again.summary.files.find((f) => f.table === 'cod')!.path);
    expect(unchanged.stdout).toContain(', 2 unchanged, 6 rows without a mark left as they are, 0 rejected');
  });

  it("marks the findings of the workbook's cod sheet, and refuses a file without the mark column whole", async () => {
    const db = await freshWarehouse();
    const { summary } = await codReport(db, 'xlsx');
    const file = summary.files.find((f) => f.table === 'cod')!.path;
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(file);
    const sheet = workbook.getWorksheet('cod')!;
    const header = (sheet.getRow(1).values as unknown[]).map(String);
    const row = [2, 3, 4, 5, 6, 7, 8, 9].find(
      (n) => sheet.getRow(n).getCell(header.indexOf('finding')).value === 'unpaid_delivered',
    )!;
    sheet.getRow(row).getCell(header.indexOf('mark')).value = 'disputed';
    sheet.getRow(row).getCell(header.indexOf('mark_note')).value = 'carrier says paid in P5';
    const marked = join(dir, 'marked.xlsx');
    await workbook.xlsx.writeFile(marked);
    const run = await findings(db, 'import', marked);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('findings: 1 marked, ');
    const after = await findingRows((await codReport(db)).summary);
    expect(after.filter((r) => r.mark !== null).map((r) => [r.finding, r.order_code, r.mark])).toEqual([
      ['unpaid_delivered', 'EXU0001', 'disputed'],
    ]);

    const other = join(dir, 'other.csv');
    await writeFile(other, 'finding,carrier,order_code\nfees_withheld,247express,EXF0001\n');
    const refused = await findings(db, 'import', other);
    expect([refused.code, refused.stderr]).toEqual([
      2,
      `parcel-recon: ${other}: not rows of the cod report with their marks: it lacks "batch_id", "mark", "mark_note"; its columns are "finding", "carrier", "order_code"\n`,
    ]);
  });
});
