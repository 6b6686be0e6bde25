/**
 * `report cod` run as a user runs it, against a real DuckDB file: tracked orders loaded as the
 * carrier answered them, statements imported with `payouts import`, one anomaly of each kind
 * planted. Each is flagged by its own check with its amount, no clean order is flagged, and the
 * money outstanding is summed per account and aging bucket; the workbook's money is numeric.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { readJsonRows } from '../reports/report-fixtures.js';
import { cli } from '../support/cli-process.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { buildCodWarehouse, CONFIG, NOW } from './cod-warehouse.js';

let dir: string;
let db: string;
let config: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parcel-recon-cod-'));
  ({ db, config } = await buildCodWarehouse(dir));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function report(format: string, out: string, ...args: string[]) {
  return cli(['report', 'cod', '--db', db, '--config', config, '--format', format, '--out', out, '--json', ...args], {
    PARCEL_RECON_NOW: NOW,
  });
}

interface Summary {
  readonly files: { table: string; path: string; rows: number }[];
  readonly figures: { findings: Record<string, number>; atStake: Record<string, string>; outstanding: string };
}

describe('report cod', () => {
  it('flags each planted anomaly by its own check with its amount, and no clean order', async () => {
    const out = join(dir, 'json');
    const run = await report('json', out);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as Summary;
    const findings = await readJsonRows(summary.files.find((f) => f.table === 'cod')!.path);
    const found = findings
      .map((f) => [f.finding, f.carrier, f.account_alias, f.batch_id ?? f.order_code, Number(f.at_stake)])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(found).toEqual(
      [
        ['unpaid_delivered', '247express', 'shop-b', 'EXU0001', 700_000],
        ['line_net', '247express', 'shop-a', 'P2', 10_400],
        ['batch_net', '247express', 'shop-a', 'P2', 10_400],
        ['batch_total', '247express', null, 'P1', 20_000],
        ['fees_withheld', '247express', 'shop-a', 'EXF0001', 20_000],
        ['paid_not_delivered', '247express', 'shop-a', 'EXN0001', 250_000],
        ['paid_twice', '247express', 'shop-a', 'EXD0001', 800_000],
        ['return_fee_not_returned', '247express', 'shop-b', 'EXT0001', 25_000],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const unpaid = findings.find((f) => f.finding === 'unpaid_delivered')!;
    expect([unpaid.days_outstanding, unpaid.aging, unpaid.finding_day]).toEqual([18, '15-30 days', '2026-11-10']);
    const line = findings.find((f) => f.finding === 'line_net')!;
    expect([line.order_code, Number(line.actual), Number(line.expected), Number(line.difference)]).toEqual([
      'EXL0001',
      350_000,
      360_400,
      -10_400,
    ]);
    // Ranked by the money at stake, the largest first.
    expect(findings.map((f) => Number(f.at_stake))).toEqual(
      findings.map((f) => Number(f.at_stake)).sort((a, b) => b - a),
    );
    expect(summary.figures.atStake.paid_twice).toBe('800000');
    expect(summary.figures.outstanding).toBe('1000000');
  });

  it('prints the money outstanding, then the checks ranked by the money at stake', async () => {
    const run = await cli(['report', 'cod', '--db', db, '--config', config, '--out', join(dir, 'printed')], {
      PARCEL_RECON_NOW: NOW,
    });
    expect(run.stdout.split('\n').slice(0, 8)).toEqual([
      'cod report, 2026-11-05 to 2026-11-28',
      '  2 delivered COD orders in no statement, 1,000,000 VND outstanding',
      '  paid_twice: 1 findings, 800,000 VND',
      '  unpaid_delivered: 1 findings, 700,000 VND',
      '  paid_not_delivered: 1 findings, 250,000 VND',
      '  return_fee_not_returned: 1 findings, 25,000 VND',
      '  batch_total: 1 findings, 20,000 VND',
      '  and 3 more checks: 3 findings, 40,800 VND',
    ]);
  });

  it("compares the COD collected with the shop's own records, for the orders a statement paid", async () => {
    const partner = join(dir, 'shop.csv');
    // EXC0002: the shop expects 450,000, the statement collected 500,000; EXU0001 is in no statement;
    // EXD0001's COD was paid twice, each time the 800,000 the shop expects: paid_twice's, not shop_cod's.
    await writeFile(
      partner,
      'order_code,cod_amount\nEXC0001,1000000\nEXC0002,450000\nEXU0001,650000\nEXD0001,800000\n',
    );
    const run = await report('json', join(dir, 'shop'), '--partner', partner);
    expect(run.stderr).toBe('');
    const summary = JSON.parse(run.stdout) as Summary;
    const findings = await readJsonRows(summary.files.find((f) => f.table === 'cod')!.path);
    const shop = findings.filter((f) => f.finding === 'shop_cod');
    expect(shop.map((f) => [f.order_code, Number(f.actual), Number(f.expected), Number(f.at_stake)])).toEqual([
      ['EXC0002', 500_000, 450_000, 50_000],
    ]);
    expect(findings).toHaveLength(9);
  });

  it('keeps the findings of --account, and of the days of --from and --to', async () => {
    const kinds = async (...args: string[]) => {
      const run = await report('json', join(dir, 'scoped'), ...args);
      expect(run.stderr).toBe('');
      const summary = JSON.parse(run.stdout) as Summary;
      const findings = await readJsonRows(summary.files.find((f) => f.table === 'cod')!.path);
      return findings.map((f) => `${f.finding} ${f.batch_id ?? f.order_code}`).sort();
    };
    expect(await kinds('--account', 'shop-b')).toEqual(['return_fee_not_returned EXT0001', 'unpaid_delivered EXU0001']);
    expect(await kinds('--from', '2026-11-20', '--to', '2026-11-30')).toEqual([
      'batch_net P2',
      'fees_withheld EXF0001',
      'line_net P2',
      'paid_not_delivered EXN0001',
      'paid_twice EXD0001',
      'return_fee_not_returned EXT0001',
    ]);
  });

  it('runs as the job cod-audit, its findings in the job summary', async () => {
    const jobConfig = join(dir, 'job.config.json');
    await writeFile(
      jobConfig,
      JSON.stringify({ ...CONFIG, warehouse: db, reports: { outDir: join(dir, 'jobs'), format: 'csv' } }),
    );
    const run = await cli(['jobs', 'run', 'cod-audit', '--config', jobConfig, '--json'], { PARCEL_RECON_NOW: NOW });
    expect(run.code, run.stderr).toBe(0);
    const job = JSON.parse(run.stdout) as {
      steps: { step: string; summary: { findings: string[]; files: { path: string }[] } }[];
    };
    expect(job.steps.map((s) => s.step)).toEqual(['cod report']);
    const [step] = job.steps;
    expect(step!.summary.findings.slice(0, 2)).toEqual([
      '2 delivered COD orders in no statement, 1,000,000 VND outstanding',
      'paid_twice: 1 findings, 800,000 VND',
    ]);
    expect(step!.summary.files.map((f) => f.path)).toContain(
      join(dir, 'jobs', 'cod-audit', 'cod_2026-11-05_2026-11-28.csv'),
    );
  });

  it('cod-audit posts when the money outstanding is above notify.codOutstandingAbove, and not at or below it', async () => {
    const hook = await startWebhookReceiver();
    try {
      const posted = async (codOutstandingAbove: number) => {
        const jobConfig = join(dir, `notify-${codOutstandingAbove}.config.json`);
        const settings = { warehouse: db, reports: { outDir: join(dir, 'jobs'), format: 'csv' } };
        await writeFile(jobConfig, JSON.stringify({ ...CONFIG, ...settings, notify: { codOutstandingAbove } }));
        const before = hook.posts.length;
        const run = await cli(['jobs', 'run', 'cod-audit', '--config', jobConfig, '--json'], {
          PARCEL_RECON_NOW: NOW,
          PARCEL_RECON_NOTIFY_URL: `${hook.url}/hook`,
        });
        expect(run.code, run.stderr).toBe(0);
        return hook.posts.slice(before).map((p) => p.body as { text: string; summary: { alerts?: unknown } });
      };
      // 1,000,000 VND of delivered COD is in no statement.
      const [alert, ...more] = await posted(999_999);
      expect(more).toEqual([]);
      expect(alert!.text).toContain(
        '\ncod: 2 delivered COD orders in no statement, 1,000,000 VND outstanding\n  paid_twice: 1 findings, 800,000 VND\n',
      );
      expect(await posted(1_000_000)).toEqual([]);
    } finally {
      await hook.close();
    }
  });

  it("matches the batches' net paid with the shop's bank deposits, and the deposits with the batches", async () => {
    const deposited = join(dir, 'deposited.duckdb');
    await copyFile(db, deposited);
    const bank = join(dir, 'sao-ke.csv');
    // P1's 3,417,000 three days after it; 1,900,000 where P2's 1,920,800 was due; 500,000 of no batch; a bad row.
    await writeFile(
      bank,
      [
        'Ngày giao dịch,Số tiền ghi có,Nội dung',
        '20/11/2026,3.417.000,247EXPRESS CK PHIEN P1',
        '25/11/2026,1.900.000,247EXPRESS CK PHIEN P2',
        '28/11/2026,500.000 đ,247EXPRESS CK',
        '29/11/2026,abc,247EXPRESS CK',
      ].join('\n'),
    );
    const deposits = ['payouts', 'deposits', bank, '--db', deposited, '--config', config];
    const dry = await cli([...deposits, '--dry-run'], { PARCEL_RECON_NOW: NOW });
    expect(dry.stdout).toBe(
      `dry run, nothing changed: deposits ${bank}: 4 rows read, 3 would be added, 0 unchanged, 1 rejected\n  ${bank}:5: column "Số tiền ghi có": "abc" is not an amount of VND\n`,
    );
    const imported = await cli(deposits, { PARCEL_RECON_NOW: NOW });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout.split('\n')[0]).toMatch(
      new RegExp(`^deposits ${bank}: 4 rows read, 3 added, 0 unchanged, 1 rejected; rejects .+\\.csv$`),
    );
    const again = await cli(deposits, { PARCEL_RECON_NOW: NOW });
    expect(again.stdout.split('\n')[0]).toMatch(/: 4 rows read, 0 added, 3 unchanged, 1 rejected; /);
    const run = await cli(
      ['report', 'cod', '--db', deposited, '--config', config, '--format', 'json', '--out', join(dir, 'dep'), '--json'],
      { PARCEL_RECON_NOW: NOW },
    );
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as Summary;
    const findings = await readJsonRows(summary.files.find((f) => f.table === 'cod')!.path);
    const bankFindings = findings
      .filter((f) => String(f.finding).includes('deposit'))
      .map((f) => [f.finding, f.carrier, f.batch_id, f.finding_day, Number(f.at_stake), f.detail]);
    expect(bankFindings).toEqual([
      ['batch_not_deposited', '247express', 'P2', '2026-11-24', 1_920_800, 'no deposit of 1920800 by 2026-11-27'],
      ['deposit_without_batch', null, null, '2026-11-25', 1_900_000, 'deposit: 247EXPRESS CK PHIEN P2'],
      ['deposit_without_batch', null, null, '2026-11-28', 500_000, 'deposit: 247EXPRESS CK'],
    ]);
    expect(findings).toHaveLength(11);
  });

  it('has a section of the HTML page: the money outstanding and the findings by money at stake', async () => {
    const out = join(dir, 'page.html');
    const run = await cli(['report', 'html', '--db', db, '--out', out], { PARCEL_RECON_NOW: NOW });
    expect(run.code, run.stderr).toBe(0);
    const page = await readFile(out, 'utf8');
    const section = page.slice(page.indexOf('<section id="cod"'));
    expect(section).toContain('<dd data-figure="cod-outstanding">1,000,000</dd>');
    expect(section).toContain('<dd data-figure="cod-findings">8</dd>');
    const findings = section.slice(section.indexOf('data-table="cod-findings"'));
    const orders = [...findings.matchAll(/<tr><td data-value="(\w+)">/g)].map((m) => m[1]);
    expect(orders).toEqual([
      'paid_twice',
      'unpaid_delivered',
      'paid_not_delivered',
      'return_fee_not_returned',
      'batch_total',
      'fees_withheld',
      'batch_net',
      'line_net',
    ]);
  });

  it('sums the money outstanding per carrier, account and aging bucket, the recent orders included', async () => {
    const out = join(dir, 'aging');
    const run = await report('json', out);
    const summary = JSON.parse(run.stdout) as Summary;
    const aging = await readJsonRows(summary.files.find((f) => f.table === 'cod-outstanding')!.path);
    expect(aging.map((a) => [a.carrier, a.account_alias, a.aging, Number(a.orders), Number(a.outstanding)])).toEqual([
      ['247express', 'shop-a', '0-7 days', 1, 300_000],
      ['247express', 'shop-b', '15-30 days', 1, 700_000],
    ]);
  });

  it('counts an order unpaid only after --unpaid-after-days', async () => {
    const run = await report('json', join(dir, 'days'), '--unpaid-after-days', '2');
    const summary = JSON.parse(run.stdout) as Summary;
    const findings = await readJsonRows(summary.files.find((f) => f.table === 'cod')!.path);
    const unpaid = findings.filter((f) => f.finding === 'unpaid_delivered').map((f) => f.order_code);
    expect(unpaid.sort()).toEqual(['EXC0003', 'EXU0001']);
    const refused = await report('json', join(dir, 'days'), '--unpaid-after-days', 'seven');
    expect([refused.code, refused.stderr.trim()]).toEqual([
      2,
      'parcel-recon: --unpaid-after-days: a whole number of days, such as 7',
    ]);
  });

  it('takes the rules from the configuration (cod.unpaidAfterDays): report cod and the cod-audit job alike', async () => {
    const ruled = join(dir, 'ruled.config.json');
    const settings = { warehouse: db, reports: { outDir: join(dir, 'ruled-jobs'), format: 'json' } };
    await writeFile(ruled, JSON.stringify({ ...CONFIG, ...settings, cod: { unpaidAfterDays: 2 } }));
    const run = await cli(
      ['report', 'cod', '--config', ruled, '--format', 'json', '--out', join(dir, 'ruled'), '--json'],
      {
        PARCEL_RECON_NOW: NOW,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const findings = await readJsonRows((JSON.parse(run.stdout) as Summary).files.find((f) => f.table === 'cod')!.path);
    expect(
      findings
        .filter((f) => f.finding === 'unpaid_delivered')
        .map((f) => f.order_code)
        .sort(),
    ).toEqual(['EXC0003', 'EXU0001']);
    const job = await cli(['jobs', 'run', 'cod-audit', '--config', ruled, '--json'], { PARCEL_RECON_NOW: NOW });
    expect(job.code, job.stderr).toBe(0);
    const [step] = (
      JSON.parse(job.stdout) as { steps: { summary: { figures: { findings: Record<string, number> } } }[] }
    ).steps;
    expect(step!.summary.figures.findings.unpaid_delivered).toBe(2);
  });

  it('writes the workbook with numeric money, and Parquet with whole-VND integers', async () => {
    const run = await report('xlsx', join(dir, 'xlsx'));
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as Summary;
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(summary.files.find((f) => f.table === 'cod')!.path);
    const sheet = workbook.getWorksheet('cod')!;
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    const atStake = header.indexOf('at_stake') + 1;
    expect(sheet.getRow(2).getCell(atStake).value).toBe(800_000);

    const parquet = await report('parquet', join(dir, 'parquet'));
    const file = (JSON.parse(parquet.stdout) as Summary).files.find((f) => f.table === 'cod')!.path;
    const warehouse = await Warehouse.open(join(dir, 'scratch.duckdb'));
    try {
      const reader = await warehouse.readAll(
        `SELECT typeof(at_stake) AS type, sum(at_stake) AS total FROM read_parquet('${file}') GROUP BY ALL`,
      );
      expect(reader.getRowObjectsJson()).toEqual([{ type: 'BIGINT', total: '1835800' }]);
    } finally {
      await warehouse.close();
    }
  });
});
