/**
 * The HTML report in a real browser: Debian's Chromium (headless, network off) opens the page the
 * command wrote over a synthetic warehouse, and every section, chart and number is checked against
 * the CSV reports of the same period.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'csv-parse/sync';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts');
const FROM = '2026-10-08';
const TO = '2026-11-20';
const NOW = { PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' };
/** A post office name that must come out as text, not markup. */
const TRICKY_OFFICE = '<i>Bưu cục Đống Đa & "Tây"</i>';
const ROW_LIMIT = 200;

type CsvRow = Record<string, string>;

async function csvTables(out: string, stdout: string): Promise<Record<string, CsvRow[]>> {
  const files = (JSON.parse(stdout) as { files: { table: string; path: string }[] }).files;
  const tables: Record<string, CsvRow[]> = {};
  for (const file of files)
    tables[file.table] = parse(await readFile(file.path, 'utf8'), { bom: true, columns: true }) as CsvRow[];
  expect(Object.keys(tables).length, out).toBeGreaterThan(0);
  return tables;
}

/** A table of the page as rows of its cells' exact values (data-value) by column key, and its data-total. */
async function pageTable(page: Page, name: string): Promise<{ rows: CsvRow[]; total: number }> {
  return page.$eval(`table[data-table="${name}"]`, (table) => {
    const keys = [...table.querySelectorAll('thead th')].map((th) => (th as HTMLElement).dataset.key!);
    const rows = [...(table as HTMLTableElement).tBodies[0]!.rows].map((row) =>
      Object.fromEntries([...row.cells].map((cell, i) => [keys[i]!, cell.dataset.value ?? ''])),
    );
    return { rows, total: Number((table as HTMLElement).dataset.total) };
  });
}

function pick(rows: readonly CsvRow[], keys: readonly string[]): CsvRow[] {
  return rows.map((row) => Object.fromEntries(keys.map((k) => [k, row[k] ?? ''])));
}

describe('report html in Chromium', () => {
  let dir: string;
  let browser: Browser;
  let page: Page;
  let pagePath: string;
  let csv: Record<string, CsvRow[]>;
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  let db: { runs: number; lookups: Record<string, number> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-html-'));
    const dbPath = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(dbPath, 6000);
    const warehouse = await Warehouse.open(dbPath);
    try {
      await warehouse.run(
        `UPDATE delivery_failures SET post_office_name = $1 WHERE post_office_name IN ('Bưu cục 7', 'Bưu cục 8', 'Bưu cục 9')`,
        [TRICKY_OFFICE],
      );
      const [runs] = (
        await warehouse.readAll(
          `SELECT count(*) AS n FROM runs WHERE carrier_day BETWEEN DATE '${FROM}' AND DATE '${TO}'`,
        )
      ).getRowObjectsJson();
      const lookups = (
        await warehouse.readAll(
          `SELECT key_alias, sum(lookups) AS n FROM quota_usage WHERE key_alias <> '*' AND carrier_day BETWEEN DATE '${FROM}' AND DATE '${TO}' GROUP BY ALL`,
        )
      ).getRowObjectsJson();
      db = {
        runs: Number(runs!.n),
        lookups: Object.fromEntries(lookups.map((r) => [String(r.key_alias), Number(r.n)])),
      };
    } finally {
      await warehouse.close();
    }

    pagePath = join(dir, 'page', 'report.html');
    const html = await cli(
      ['report', 'html', '--db', dbPath, '--from', FROM, '--to', TO, '--out', pagePath, '--json'],
      NOW,
    );
    expect(html.code, html.stderr).toBe(0);
    expect(JSON.parse(html.stdout)).toMatchObject({
      report: 'html',
      range: { from: FROM, to: TO },
      figures: { path: pagePath },
    });
    csv = {};
    for (const report of ['charges', 'failures']) {
      const out = join(dir, 'csv');
      const result = await cli(
        ['report', report, '--db', dbPath, '--from', FROM, '--to', TO, '--format', 'csv', '--out', out, '--json'],
        NOW,
      );
      expect(result.code, result.stderr).toBe(0);
      Object.assign(csv, await csvTables(out, result.stdout));
    }

    // Offline three ways: a proxy that answers nothing, the context offline, every routed request aborted and recorded.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--proxy-server=127.0.0.1:9', '--proxy-bypass-list=<-loopback>'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.setOffline(true);
    const pageUrl = pathToFileURL(pagePath).href;
    await context.route('**/*', async (route) => {
      if (route.request().url() === pageUrl) return route.continue();
      requests.push(route.request().url());
      return route.abort();
    });
    page = await context.newPage();
    page.on('request', (request) => {
      if (request.url() !== pageUrl) requests.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    await page.goto(pageUrl, { waitUntil: 'load' });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('is one UTF-8 file that names no URL, fetches nothing and logs no error', async () => {
    const source = await readFile(pagePath, 'utf8');
    expect(source).not.toMatch(/https?:\/\/|src=|<link/i);
    expect(Buffer.byteLength(source)).toBeLessThan(5_000_000);
    expect(await page.evaluate(() => document.characterSet)).toBe('UTF-8');
    expect(requests).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'html-report.png'), fullPage: true });
  });

  it('has every section, and every chart is an SVG with marks', async () => {
    for (const id of ['runs', 'charges', 'failures', 'awaiting'])
      expect(await page.locator(`section#${id} h2`).isVisible(), id).toBe(true);
    const charts = [
      'quota-by-day',
      'charges-at-stake',
      'charges-flagged',
      'failures-by-week',
      'failures-by-province',
      'failures-by-post-office',
      'awaiting-by-reason',
    ];
    expect(
      await page.$$eval('figure[data-chart]', (figures) => figures.map((f) => (f as HTMLElement).dataset.chart)),
    ).toEqual(charts);
    for (const chart of charts) {
      const marks = await page.locator(`figure[data-chart="${chart}"] svg .mark-rect path`).count();
      expect(marks, chart).toBeGreaterThan(0);
    }
  });

  it('shows the numbers of the CSV reports of the same period', async () => {
    const summaryKeys = ['check_name', 'account_alias', 'orders_flagged', 'orders_checked', 'amount_at_stake'];
    // The checks by the money they put at stake over all accounts, `any` first; each check's accounts as in the CSV.
    const overall = csv['charges-summary']!.filter((r) => r.account_alias === '*');
    const rank = (check: string) => {
      const row = overall.find((r) => r.check_name === check)!;
      return overall.filter(
        (r) =>
          (r.check_name === 'any') > (check === 'any') ||
          ((r.check_name === 'any') === (check === 'any') &&
            (Number(r.amount_at_stake) > Number(row.amount_at_stake) ||
              (Number(r.amount_at_stake) === Number(row.amount_at_stake) &&
                Number(r.orders_flagged) > Number(row.orders_flagged)))),
      ).length;
    };
    const byMoney = [...csv['charges-summary']!].sort((a, b) => rank(a.check_name!) - rank(b.check_name!));
    const firstCheck = (rows: readonly Record<string, string>[]) =>
      rows.find((r) => r.check_name !== 'any')!.check_name;
    expect(firstCheck(byMoney)).not.toBe(firstCheck(csv['charges-summary']!));
    expect((await pageTable(page, 'charges-summary')).rows).toEqual(pick(byMoney, summaryKeys));
    const any = csv['charges-summary']!.find((r) => r.check_name === 'any' && r.account_alias === '*')!;
    expect(Number(any.orders_flagged)).toBeGreaterThan(0);
    expect(await page.locator('[data-figure="orders-flagged"]').textContent()).toBe(
      Number(any.orders_flagged).toLocaleString('en-US'),
    );

    const flagged = csv.charges!.filter((r) => Number(r.flags_failed) > 0);
    const top = await pageTable(page, 'charges-top-orders');
    expect(top.total).toBe(flagged.length);
    const byStake = flagged.map((r) => Number(r.amount_at_stake || -1)).sort((a, b) => b - a);
    expect(top.rows.map((r) => Number(r.amount_at_stake || -1))).toEqual(byStake.slice(0, ROW_LIMIT));

    const breakdown = ['failures', 'orders', 'share'];
    expect((await pageTable(page, 'failures-by-reason')).rows).toEqual(
      pick(csv['failures-by-reason']!, ['delay_code', 'delay_meaning', ...breakdown]),
    );
    expect((await pageTable(page, 'failures-by-week')).rows).toEqual(
      pick(csv['failures-by-week']!, ['iso_week', ...breakdown]),
    );
    for (const [name, keys] of [
      ['failures-by-province', ['province_name']],
      ['failures-by-post-office', ['post_office_name', 'province_name']],
    ] as const) {
      const table = await pageTable(page, name);
      expect(table.total, name).toBe(csv[name]!.length);
      expect(table.rows, name).toEqual(pick(csv[name]!, [...keys, ...breakdown]).slice(0, ROW_LIMIT));
    }
    const failures = csv['failures-by-reason']!.reduce((sum, r) => sum + Number(r.failures), 0);
    expect(await page.locator('[data-figure="failures"]').textContent()).toBe(failures.toLocaleString('en-US'));

    const awaiting = await pageTable(page, 'failures-awaiting');
    expect(awaiting.total).toBe(csv['failures-awaiting']!.length);
    expect(awaiting.total).toBeGreaterThan(ROW_LIMIT);
    expect(awaiting.rows.map((r) => r.order_code)).toEqual(
      csv['failures-awaiting']!.slice(0, ROW_LIMIT).map((r) => r.order_code),
    );
    expect(await page.locator('section#awaiting .note').textContent()).toContain(
      `of ${awaiting.total.toLocaleString('en-US')} rows`,
    );

    expect((await pageTable(page, 'runs')).rows.length).toBe(Math.min(db.runs, 30));
    const quota = await pageTable(page, 'quota-per-key');
    expect(Object.fromEntries(quota.rows.map((r) => [r.key_alias, Number(r.lookups)]))).toEqual(db.lookups);
  });

  it('keeps Vietnamese text and markup-like names as text', async () => {
    const offices = (await pageTable(page, 'failures-by-post-office')).rows.map((r) => r.post_office_name);
    expect(offices).toContain(TRICKY_OFFICE);
    expect(
      await page.locator('table[data-table="failures-by-post-office"] td').filter({ hasText: TRICKY_OFFICE }).count(),
    ).toBeGreaterThan(0);
    expect(await page.locator('table i').count()).toBe(0);
    expect(
      await page.locator('table[data-table="failures-awaiting"] td', { hasText: 'Người nhận hẹn lại' }).count(),
    ).toBeGreaterThan(0);
  });

  it('sorts a table by the header clicked, both ways', async () => {
    const header = page.locator('table[data-table="failures-by-province"] th[data-key="failures"]');
    const counts = async () => (await pageTable(page, 'failures-by-province')).rows.map((r) => Number(r.failures));
    const before = await counts();
    await header.click();
    expect(await counts()).toEqual([...before].sort((a, b) => a - b));
    await header.click();
    expect(await counts()).toEqual([...before].sort((a, b) => b - a));
    await page.locator('table[data-table="failures-by-province"] th[data-key="province_name"]').click();
    const names = (await pageTable(page, 'failures-by-province')).rows.map((r) => r.province_name!);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'vi')));
  });

  it('prints without the navigation and with the tables unclipped', async () => {
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('nav').isVisible()).toBe(false);
    expect(await page.$eval('.scroll', (el) => getComputedStyle(el).overflow)).toBe('visible');
    await page.pdf({ path: join(ARTIFACTS, 'html-report.pdf'), format: 'A4' });
    await page.emulateMedia({ media: 'screen' });
  });
});
