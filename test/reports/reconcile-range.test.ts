/**
 * A reconcile reads the warehouse within the range of the codes it compares (the scope's orders' and
 * the partner's lines'), a part of the codes at a time when they are many: the findings are those of
 * the whole warehouse at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticWarehouse } from '../../bench/support/synthetic-warehouse.js';
import { loadPartnerRecords } from '../../src/reports/partner-records.js';
import { RUN_FINDINGS, reconcileTables } from '../../src/reports/reconcile-report.js';
import { reconcileBoundaries, reconciledCodes } from '../../src/reports/report-export.js';
import { type ReportScope, reportTable, scopeCondition } from '../../src/reports/report-sql.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';

const MONTH: ReportScope = { fromDay: '2026-06-01', toDay: '2026-06-30' };
const ORDERS = 200_000;
const RULES = { moneyTolerance: '1' };

describe('a reconcile over a long history', () => {
  let dir: string;
  let warehouse: Warehouse;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-reconcile-range-'));
    const dbPath = join(dir, 'recon.duckdb');
    await buildSyntheticWarehouse(dbPath, ORDERS, join(dir, 'partner.csv'), {
      historyDays: 365,
      lookupHistory: { nights: 3, perNight: 5_000, lastNight: '2026-06-20' },
    });
    warehouse = await Warehouse.open(dbPath, { readOnly: true, directories: [dir] });
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
  }, 180_000);

  afterAll(async () => {
    await warehouse?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
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
    for (const scope of [MONTH, { ...MONTH, account: 'shop-4' }, {}]) {
      const whole = await findings(scope, undefined, []);
      const codes = await reconciledCodes(warehouse, scope);
      const boundaries = await reconcileBoundaries(warehouse, codes, lines, 20_000);
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
