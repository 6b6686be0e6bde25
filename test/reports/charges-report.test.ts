import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierDayOf, DAY_MS } from '../../src/carriers/247express/contract.js';
import {
  CHARGE_CHECKS,
  ChargeRulesSchema,
  chargesQuery,
  chargesSummaryQuery,
  DEFAULT_CHARGE_RULES,
  NARROW_MONEY_BOUND,
  narrowMoneyQuery,
  withStoredMoneyTypes,
} from '../../src/reports/charges-report.js';
import { exportChargesReport } from '../../src/reports/report-export.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import type { AnomalyKind } from '../../src/sandbox/world/order-plan.js';
import { refreshChargeAudit } from '../../src/warehouse/charge-audit-rows.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { postControl, startTestSandbox, truthAnomalies } from '../sandbox/sandbox-http.js';
import { cli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { allOrdersCsv, quoteTrackedOrders, readJsonRows, sandboxNow } from './report-fixtures.js';

/** The check that must flag each kind of injected anomaly (others may flag it too). */
const CHECK_OF_KIND: Record<AnomalyKind, string> = {
  total_mismatch: 'lines_sum',
  wrong_cal_weight: 'cal_weight',
  wrong_chargeable_weight: 'chargeable_weight',
  wrong_fuel: 'fuel',
  wrong_vat: 'vat',
  far_region_fee_without_line: 'far_region_line',
  return_charge_not_returned: 'return_not_returned',
  charge_on_cancelled: 'cancelled_charged',
  overbilled_vs_quote: 'quote',
  total_changed_after_delivery: 'quote',
};

type ChargeRow = Record<string, unknown> & { order_code: string; flags_failed: number };

describe('report charges', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 120, lifecycle: { anomalyRate: 0.3 } });
    workspace = await trackingWorkspace();
    const csv = await allOrdersCsv(sandbox, workspace);
    // Every 6 hours for two days: a re-bill 6 hours after a delivery falls between two snapshots, so the change log sees it.
    for (let run = 0; run < 9; run++) {
      if (run > 0) await postControl(sandbox, '/_sandbox/clock', { advanceHours: 6 });
      await workspace.track(sandbox, [csv]);
    }
    await quoteTrackedOrders(sandbox, workspace.dbPath);
  });

  afterAll(async () => {
    await sandbox?.stop();
    await workspace?.dispose();
  });

  it('flags exactly the injected anomalies that show, each by its own check', async () => {
    const out = join(workspace.dir, 'reports');
    const result = await cli(
      ['report', 'charges', '--db', workspace.dbPath, '--format', 'json', '--out', out, '--json'],
      sandboxNow(sandbox),
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { files: { table: string; path: string; rows: number }[] };
    const rows = await readJsonRows<ChargeRow>(summary.files.find((f) => f.table === 'charges')!.path);
    expect(rows).toHaveLength(360);

    const anomalies = (await truthAnomalies(sandbox)).filter((a) => a.observableNow);
    const kinds = new Set(anomalies.map((a) => a.kind));
    expect([...kinds].sort()).toEqual(Object.keys(CHECK_OF_KIND).sort());

    const flagged = rows
      .filter((r) => r.flags_failed > 0)
      .map((r) => r.order_code)
      .sort();
    expect(flagged).toEqual(anomalies.map((a) => a.orderCode).sort());
    const byCode = new Map(rows.map((r) => [r.order_code, r]));
    for (const anomaly of anomalies) {
      expect(
        byCode.get(anomaly.orderCode)?.[`${CHECK_OF_KIND[anomaly.kind]}_flag`],
        `${anomaly.orderCode} ${anomaly.kind}`,
      ).toBe(true);
    }
    // The change log caught re-bills after delivery, and nothing else.
    const changed = rows.filter((r) => r.changed_after_delivery_flag === true).map((r) => r.order_code);
    expect(changed.length).toBeGreaterThan(0);
    const rebilled = new Set(
      anomalies.filter((a) => a.kind === 'total_changed_after_delivery').map((a) => a.orderCode),
    );
    for (const code of changed) expect(rebilled.has(code), code).toBe(true);

    const summaryRows = await readJsonRows<{ check_name: string; account_alias: string; orders_flagged: number }>(
      summary.files.find((f) => f.table === 'charges-summary')!.path,
    );
    expect(summaryRows.find((r) => r.check_name === 'any' && r.account_alias === '*')?.orders_flagged).toBe(
      anomalies.length,
    );
  });

  it('computes the same rows in 64-bit money as in DECIMAL(20,4), and gives them the stored types', async () => {
    const warehouse = await Warehouse.open(workspace.dbPath, { readOnly: true });
    try {
      const [fits] = (await warehouse.readAll(narrowMoneyQuery({}))).getRowObjectsJson();
      expect(fits?.narrow).toBe(true);
      const wide = chargesQuery(DEFAULT_CHARGE_RULES);
      const narrow = chargesQuery(DEFAULT_CHARGE_RULES, {}, { narrowMoney: true });
      const types = async (query: string) =>
        (await warehouse.readAll(`DESCRIBE ${query}`))
          .getRowObjectsJson()
          .map((c) => `${c.column_name} ${c.column_type}`);
      expect(await types(withStoredMoneyTypes(narrow))).toEqual(await types(wide));
      expect(await types(narrow)).not.toEqual(await types(wide));
      // Shares of six digits leave too few digits for every amount's share to be computed in 64 bits.
      const finerShares = ChargeRulesSchema.parse({ fuelShare: '0.123457', vatShare: '0.081234' });
      for (const rules of [DEFAULT_CHARGE_RULES, finerShares]) {
        const [wideRows, narrowRows] = [{}, { narrowMoney: true }].map((o) => chargesQuery(rules, {}, o));
        const [counts] = (
          await warehouse.readAll(
            `SELECT (SELECT count(*) FROM (${wideRows})) AS orders,
                    (SELECT count(*) FROM ((${wideRows}) EXCEPT ALL (${narrowRows}))) AS only_wide,
                    (SELECT count(*) FROM ((${narrowRows}) EXCEPT ALL (${wideRows}))) AS only_narrow`,
          )
        ).getRowObjectsJson();
        expect(Number(counts?.orders)).toBeGreaterThan(300);
        expect([Number(counts?.only_wide), Number(counts?.only_narrow)]).toEqual([0, 0]);
      }

      // The summary from the flagged orders' rows alone, with the orders checked counted from the orders.
      const fromAll = chargesSummaryQuery(`(${wide})`);
      const fromFlagged = chargesSummaryQuery(`(SELECT * FROM (${narrow}) WHERE flags_failed > 0)`, 'orders');
      const summaries = await Promise.all(
        [fromAll, fromFlagged].map(async (q) => (await warehouse.readAll(q)).getRowObjectsJson()),
      );
      expect(summaries[0]!.length).toBeGreaterThan(CHARGE_CHECKS.length);
      expect(summaries[1]).toEqual(summaries[0]);
    } finally {
      await warehouse.close();
    }
  });

  it('over a range holds every order the undated report holds for its days, those never accepted included', async () => {
    const report = async (kind: 'charges' | 'reconcile', name: string, args: string[]) => {
      const out = join(workspace.dir, name);
      const result = await cli(
        ['report', kind, '--db', workspace.dbPath, '--format', 'json', '--out', out, '--json', ...args],
        sandboxNow(sandbox),
      );
      expect(result.code, result.stderr).toBe(0);
      const files = (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files;
      return readJsonRows<ChargeRow>(files.find((f) => f.table === kind)!.path);
    };
    const codes = (rows: readonly { order_code: unknown }[]) => rows.map((r) => String(r.order_code)).sort();
    const undated = await report('charges', 'undated', []);
    expect(undated).toHaveLength(360);
    // Cancelled before the carrier accepted them, or received only: no accept date.
    const neverAccepted = undated.filter((r) => r.accept_date === null);
    expect(neverAccepted.length).toBeGreaterThan(0);
    expect(neverAccepted.some((r) => r.cancelled === true)).toBe(true);

    const dayOf = (row: ChargeRow) => carrierDayOf(Date.parse(String(row.order_date)));
    const days = [...new Set(undated.map(dayOf))].sort();
    const [first, last] = [days[0]!, days.at(-1)!];
    const whole = await report('charges', 'whole', ['--from', first, '--to', last]);
    expect(codes(whole)).toEqual(codes(undated));
    // Two ranges that split the days hold the orders of their days each, every order once.
    const split = days[Math.floor(days.length / 2)]!;
    const dayAfterSplit = new Date(Date.parse(`${split}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
    const early = await report('charges', 'early', ['--from', first, '--to', split]);
    const late = await report('charges', 'late', ['--from', dayAfterSplit, '--to', last]);
    expect(codes(early)).toEqual(codes(undated.filter((r) => dayOf(r) <= split)));
    expect(codes(late)).toEqual(codes(undated.filter((r) => dayOf(r) > split)));

    // A reconcile over the range misses none of them either: the partner lists none, so each is missing_from_partner.
    const partner = join(workspace.dir, 'one-unknown-line.csv');
    await writeFile(partner, 'order_code,expected_status,invoiced_amount,cod_amount\nEXNOTTRACKED1,30,,\n');
    const findings = await report('reconcile', 'reconcile-range', [
      '--partner',
      partner,
      '--from',
      first,
      '--to',
      last,
    ]);
    expect(codes(findings.filter((f) => f.finding === 'missing_from_partner'))).toEqual(codes(undated));
  });

  it('the view report_charges gives the same flags as the command', async () => {
    const warehouse = await Warehouse.open(workspace.dbPath);
    try {
      const { installReportViews } = await import('../../src/reports/report-views.js');
      await installReportViews(warehouse);
      const viewFlagged = (
        await warehouse.readAll('SELECT order_code FROM report_charges WHERE flags_failed > 0 ORDER BY order_code')
      )
        .getRowObjectsJson()
        .map((r) => r.order_code);
      const anomalies = (await truthAnomalies(sandbox))
        .filter((a) => a.observableNow)
        .map((a) => a.orderCode)
        .sort();
      expect(viewFlagged).toEqual(anomalies);
    } finally {
      await warehouse.close();
    }
  });
});

describe('the published price example', () => {
  it('passes every check: DE 1,184,800; Fuel 236,960; VAT 142,176; total 1,563,936; CalWeight 36 from 60x60x60; Weight 60', async () => {
    const workspace = await trackingWorkspace();
    const warehouse = await Warehouse.open(workspace.dbPath);
    try {
      await warehouse.run(
        `INSERT INTO orders (carrier, order_code, account_alias, accept_date, order_date, status, length, width, height, real_weight, cal_weight, weight,
           price, price_fr, far_region_fee_amount, fuel_fee_amount, vat_amount, total_service_cost, cod_amount, is_terminal, first_seen_at, last_seen_at, last_run_id)
         VALUES ('247express', 'EXPUBLISHED1', 'default', TIMESTAMPTZ '2026-11-20 10:00:00+07', TIMESTAMPTZ '2026-11-20 10:00:00+07', '30', 60, 60, 60, 60, 36, 60,
           1184800, 0, 0, 236960, 142176, 1563936, 0, true, now(), now(), 'example')`,
      );
      await warehouse.run(
        `INSERT INTO order_charges VALUES ('247express', 'EXPUBLISHED1', 1, 'DE', 'Chuyển phát nhanh', 1184800),
           ('247express', 'EXPUBLISHED1', 2, 'Fuel', 'Phụ phí xăng dầu', 236960), ('247express', 'EXPUBLISHED1', 3, 'VAT', 'Thuế VAT', 142176)`,
      );
      // As the loaders do for the orders they write.
      await refreshChargeAudit(warehouse);
      const [row] = (await warehouse.readAll(chargesQuery(DEFAULT_CHARGE_RULES))).getRowObjectsJson() as Record<
        string,
        unknown
      >[];
      for (const { name } of CHARGE_CHECKS) expect(row?.[`${name}_flag`], name).toBe(false);
      expect(row).toMatchObject({
        flags_failed: 0,
        fuel_expected: '236960.0000',
        vat_expected: '142176.0000',
        lines_sum_expected: '1563936.0000',
        components_sum_expected: '1563936.0000',
        cal_weight_expected: 36,
        chargeable_weight_expected: 60,
        price_info: 'DE=1184800; Fuel=236960; VAT=142176',
      });
      // One dong off the fuel is within the default tolerance; two are not.
      await warehouse.run("UPDATE orders SET fuel_fee_amount = fuel_fee_amount + 2 WHERE order_code = 'EXPUBLISHED1'");
      await refreshChargeAudit(warehouse);
      const [changed] = (await warehouse.readAll(chargesQuery(DEFAULT_CHARGE_RULES))).getRowObjectsJson() as Record<
        string,
        unknown
      >[];
      expect(changed).toMatchObject({ fuel_flag: true, fuel_difference: '2.0000', components_sum_flag: true });
      // An account with orders and no flag has its rows in the summary, flagged 0, from no flagged rows.
      await warehouse.run("UPDATE orders SET fuel_fee_amount = fuel_fee_amount - 2 WHERE order_code = 'EXPUBLISHED1'");
      await refreshChargeAudit(warehouse);
      const summary = (
        await warehouse.readAll(
          chargesSummaryQuery(`(SELECT * FROM (${chargesQuery(DEFAULT_CHARGE_RULES)}) WHERE false)`, 'orders'),
        )
      ).getRowObjectsJson();
      expect(summary).toEqual(
        (await warehouse.readAll(chargesSummaryQuery(`(${chargesQuery(DEFAULT_CHARGE_RULES)})`))).getRowObjectsJson(),
      );
      expect(summary.filter((r) => r.check_name === 'any')).toEqual([
        { check_name: 'any', account_alias: '*', orders_flagged: '0', orders_checked: '1', amount_at_stake: '0.0000' },
        {
          check_name: 'any',
          account_alias: 'default',
          orders_flagged: '0',
          orders_checked: '1',
          amount_at_stake: '0.0000',
        },
      ]);

      // An amount past what 64-bit decimals hold: the report computes in DECIMAL(20,4), as stored.
      await warehouse.run(
        `UPDATE orders SET cod_amount = ${NARROW_MONEY_BOUND} * 50, price = ${NARROW_MONEY_BOUND} WHERE order_code = 'EXPUBLISHED1'`,
      );
      await refreshChargeAudit(warehouse);
      const [fits] = (await warehouse.readAll(narrowMoneyQuery({}))).getRowObjectsJson();
      expect(fits?.narrow).toBe(false);
      await expect(warehouse.readAll(chargesQuery(DEFAULT_CHARGE_RULES, {}, { narrowMoney: true }))).rejects.toThrow(
        /DECIMAL\(15,4\)/,
      );
      const out = join(workspace.dir, 'huge');
      const [file] = (
        await exportChargesReport(warehouse, DEFAULT_CHARGE_RULES, {
          scope: {},
          now: Date.now(),
          format: 'csv',
          outDir: out,
          timeZone: 'Asia/Ho_Chi_Minh',
        })
      ).files;
      const [, line] = (await readFile(file!.path, 'utf8')).split('\n');
      expect(line).toContain(',5000000000000.0000,');
      expect(line).toContain(',100000000000.0000,');
    } finally {
      await warehouse.close();
      await workspace.dispose();
    }
  });
});
