/**
 * A year of history, built once for the file. A month's report reads that month's row groups: the
 * scope's days compare the time columns themselves, and the other per-order tables are read within the
 * range of the month's order codes; the month's rows are exactly the whole history's rows of that
 * month. A reconcile reads the warehouse within the range of the codes it compares (the scope's
 * orders' and the partner's lines'), a part of the codes at a time when they are many: the findings
 * are those of the whole warehouse at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { chargesQuery, chargesTables, DEFAULT_CHARGE_RULES } from '../../src/reports/charges-report.js';
import {
  ATTEMPT_COLUMNS,
  type FailuresTables,
  failuresQuery,
  failuresTables,
  scopedFailuresQuery,
} from '../../src/reports/failures-report.js';
import { loadPartnerRecords } from '../../src/reports/partner-records.js';
import { RUN_FINDINGS, reconcileTables } from '../../src/reports/reconcile-report.js';
import {
  FAILURES_BY_ATTEMPT,
  monthParts,
  reconcileBoundaries,
  reconciledCodes,
  settleReportRange,
  withOrderCodes,
} from '../../src/reports/report-export.js';
import { ORDER_COLUMNS, type ReportScope, reportTable, scopeCondition } from '../../src/reports/report-sql.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';

const MONTH: ReportScope = { fromDay: '2026-06-01', toDay: '2026-06-30' };
/** Enough orders for a dozen row groups (122,880 rows each) of charge lines and of statuses, three of orders. */
const ORDERS = 300_000;
const RULES = { moneyTolerance: '1' };

interface ProfileNode {
  operator_name?: string;
  operator_rows_scanned?: number;
  extra_info?: { Table?: string };
  children?: ProfileNode[];
}

let dir: string;
let warehouse: Warehouse;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parcel-recon-long-history-'));
  const dbPath = join(dir, 'recon.duckdb');
  await buildSyntheticWarehouse(dbPath, ORDERS, join(dir, 'partner.csv'), {
    historyDays: 365,
    lookupHistory: { nights: 3, perNight: 5_000, lastNight: '2026-06-20' },
  });
  warehouse = await Warehouse.open(dbPath, { readOnly: true, directories: [dir] });
}, 180_000);

afterAll(async () => {
  await warehouse?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a month of a long history', () => {
  /** The most rows one scan of each table reads running `query` (after skipping row groups), from EXPLAIN ANALYZE. */
  async function rowsScanned(query: string): Promise<Record<string, number>> {
    const [row] = (await warehouse.readAll(`EXPLAIN (ANALYZE, FORMAT json) ${query}`)).getRows();
    const scanned: Record<string, number> = {};
    const walk = (node: ProfileNode) => {
      const table = node.extra_info?.Table;
      if (table !== undefined && node.operator_rows_scanned !== undefined) {
        const name = table.split('.').at(-1)!;
        scanned[name] = Math.max(scanned[name] ?? 0, node.operator_rows_scanned);
      }
      for (const child of node.children ?? []) walk(child);
    };
    walk(JSON.parse(String(row![1])) as ProfileNode);
    return scanned;
  }

  async function count(table: string): Promise<number> {
    return Number((await warehouse.readAll(`SELECT count(*) AS n FROM ${table}`)).getRowObjectsJson()[0]!.n);
  }

  /** Rows in one query and not the other, both ways (0 when they hold the same rows). */
  async function difference(a: string, b: string): Promise<number> {
    const [x, y] = [`SELECT * FROM (${a})`, `SELECT * FROM (${b})`];
    return count(`((${x} EXCEPT ALL ${y}) UNION ALL (${y} EXCEPT ALL ${x}))`);
  }

  it('charges: reads a fraction of the audit rows alone, and gives the month of the whole history', async () => {
    const scope = await withOrderCodes(warehouse, MONTH, 'orders', ORDER_COLUMNS);
    const month = chargesQuery(DEFAULT_CHARGE_RULES, scope);
    const scanned = await rowsScanned(month);
    // The audit rows hold all a charges report reads of an order.
    expect(Object.keys(scanned)).toEqual(['order_charge_audit']);
    // Three row groups of audit rows here: the month's codes lie within one of them.
    expect(scanned.order_charge_audit ?? 0).toBeLessThan((await count('order_charge_audit')) / 2);
    const whole = `SELECT * FROM (${chargesQuery(DEFAULT_CHARGE_RULES)}) WHERE ${scopeCondition(MONTH, ORDER_COLUMNS)}`;
    expect(await count(`(${month})`)).toBeGreaterThan(ORDERS / 20);
    expect(await difference(month, whole)).toBe(0);
    // The stored audit rows are those computed from the month's other rows.
    expect(await difference(month, chargesQuery(DEFAULT_CHARGE_RULES, scope, { from: 'computed' }))).toBe(0);
  }, 120_000);

  it('charges of a large scope, computed a month at a time, are the rows of the scope computed at once', async () => {
    // No first day: the parts are the range's months and the scope's orders before them.
    const scope: ReportScope = { toDay: '2026-02-28', account: 'shop-2' };
    const parts = await monthParts(warehouse, scope, { from: '2025-12-01', to: '2026-02-28' }, 0);
    expect(parts.map((p) => [p.fromDay, p.toDay, p.condition !== undefined])).toEqual([
      ['2025-12-01', '2025-12-31', false],
      ['2026-01-01', '2026-01-31', false],
      ['2026-02-01', '2026-02-28', false],
      [undefined, '2026-02-28', true],
    ]);
    const report = chargesTables(DEFAULT_CHARGE_RULES, scope, { parts });
    for (const statement of report.prepare) await warehouse.run(statement);
    const charges = reportTable(report, 'charges').query;
    expect(await count(`(${charges})`)).toBeGreaterThan(ORDERS / 100);
    expect(await difference(charges, chargesQuery(DEFAULT_CHARGE_RULES, scope))).toBe(0);
  }, 180_000);

  it('failures: the month of the whole history, each attempt numbered among all of its order', async () => {
    const days = await withOrderCodes(warehouse, MONTH, 'delivery_failures', ATTEMPT_COLUMNS);
    const month = scopedFailuresQuery(days);
    const whole = `SELECT * FROM (${failuresQuery()}) WHERE ${scopeCondition(MONTH, ATTEMPT_COLUMNS)}`;
    expect(await count(`(${month})`)).toBeGreaterThan(0);
    expect(await difference(month, whole)).toBe(0);
  }, 120_000);

  it('failures of a large scope, numbered a month at a time and grouped per order in parts, are the files of the scope at once', async () => {
    const scope: ReportScope = { toDay: '2026-02-28', account: 'shop-2' };
    const now = Date.parse('2026-03-01T00:00:00Z');
    const range = await settleReportRange(warehouse, scope, now, FAILURES_BY_ATTEMPT);
    const days = { toDay: scope.toDay };
    const parts = await monthParts(warehouse, days, range, 0, { table: 'delivery_failures', columns: ATTEMPT_COLUMNS });
    expect(parts.length).toBeGreaterThan(3);
    const at = `TIMESTAMPTZ '2026-03-01T00:00:00Z'`;
    const split = failuresTables(scope, at, {
      parts: parts.map((part) => ({ ...part, account: scope.account })),
      orderGroups: 3,
    });
    // Each report's rows are read before the next one replaces its temporary tables.
    const files = async (report: FailuresTables) => {
      for (const statement of report.prepare) await warehouse.run(statement);
      const rows: Record<string, unknown[][]> = {};
      for (const name of ['failures', 'failures-repeated'])
        rows[name] = (await warehouse.readAll(report.tables.find((t) => t.name === name)!.query)).getRowsJson();
      return rows;
    };
    const inParts = await files(split);
    const atOnce = await files(failuresTables(scope, at));
    expect(inParts.failures!.length).toBeGreaterThan(ORDERS / 100);
    expect(inParts['failures-repeated']!.length).toBeGreaterThan(0);
    expect(inParts).toEqual(atOnce);
  }, 180_000);
});

describe('a reconcile over a long history', () => {
  beforeAll(async () => {
    const partner = `read_csv('${join(dir, 'partner.csv')}', all_varchar = true)`;
    const month = `SELECT p.* FROM ${partner} AS p SEMI JOIN orders AS o ON o.order_code = p.order_code
                   AND ${scopeCondition(MONTH, { time: 'o.order_date', account: 'o.account_alias' })}`;
    await warehouse.run(`COPY (${month}) TO '${join(dir, 'month.csv')}' (FORMAT csv, HEADER)`);
    // The month's lines, a few of other months, lines repeated, and codes the warehouse does not have.
    await warehouse.run(
      `COPY (${month} UNION ALL SELECT * FROM ${partner} WHERE right(order_code, 3) = '777'
             UNION ALL SELECT * FROM ${partner} WHERE right(order_code, 4) = '0013'
             UNION ALL SELECT 'ZZ' || i, '30', '1000', '0' FROM range(5) t(i))
       TO '${join(dir, 'mixed.csv')}' (FORMAT csv, HEADER)`,
    );
  });

  /** The findings of the report's statements, as the file lists them. */
  async function findings(scope: ReportScope, codes: ReportScope['codes'], boundaries: string[]): Promise<unknown[][]> {
    const report = reconcileTables(RULES, scope, codes, boundaries);
    for (const statement of report.prepare) await warehouse.run(statement);
    const rows = (await warehouse.readAll(reportTable(report, 'reconcile').query)).getRows();
    await warehouse.run(`DROP TABLE ${RUN_FINDINGS}`);
    return rows;
  }

  it('finds within the range of codes, and in parts, what it finds over the whole warehouse', async () => {
    const lines = await loadPartnerRecords(warehouse.connection, { kind: 'csv', file: join(dir, 'mixed.csv') });
    // The partner leaves out the codes ending in 99, shop-4's.
    // Each scope with the codes of a part: the month in several parts, the whole warehouse in a few.
    const scopes: [ReportScope, number][] = [
      [MONTH, 20_000],
      [{ ...MONTH, account: 'shop-4' }, 20_000],
      [{}, 100_000],
    ];
    for (const [scope, partCodes] of scopes) {
      const whole = await findings(scope, undefined, []);
      const codes = await reconciledCodes(warehouse, scope);
      const boundaries = await reconcileBoundaries(warehouse, codes, lines, partCodes);
      expect(boundaries.length).toBeGreaterThan(2);
      expect(await findings(scope, codes, boundaries)).toEqual(whole);
      const kinds = new Set(whole.map((row) => row[1]));
      for (const kind of ['unknown_to_carrier', 'missing_from_partner', 'duplicate_line', 'invoice_mismatch'])
        expect(kinds, JSON.stringify(scope)).toContain(kind);
    }
    expect(await reconciledCodes(warehouse, {})).toBeUndefined();
  });

  it("reads about the month's orders for a month's partner lines", async () => {
    await loadPartnerRecords(warehouse.connection, { kind: 'csv', file: join(dir, 'month.csv') });
    const codes = await reconciledCodes(warehouse, MONTH);
    const report = reconcileTables(RULES, MONTH, codes);
    const [plan] = (await warehouse.readAll(`EXPLAIN (ANALYZE, FORMAT json) ${report.prepare[0]!}`)).getRows();
    let scanned = 0;
    const walk = (node: { extra_info?: { Table?: string }; operator_rows_scanned?: number; children?: unknown[] }) => {
      if (node.extra_info?.Table?.endsWith('.orders')) scanned = Math.max(scanned, node.operator_rows_scanned ?? 0);
      for (const child of node.children ?? []) walk(child as typeof node);
    };
    walk(JSON.parse(String(plan![1])));
    expect(scanned).toBeGreaterThan(0);
    expect(scanned).toBeLessThan(ORDERS / 2);
  });
});
