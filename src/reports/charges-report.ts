import { z } from 'zod';
import { neutralStatusIn } from '../carriers/carrier-definition-sql.js';
import type { ChargeCheckName } from '../carriers/charge-check-names.js';
import { KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { sumMoney } from '../carriers/money.js';
import { AUDITED_ORDER_AMOUNTS, CHARGE_AUDIT_TABLE, chargeAuditQuery } from '../warehouse/charge-audit-rows.js';
import { ofOrdersIn } from '../warehouse/order-keys.js';
import {
  codeRangeCondition,
  moneyTimesShare,
  ORDER_COLUMNS,
  type ReportScope,
  type ReportTables,
  scopeCondition,
  scoped,
  temporaryTable,
} from './report-sql.js';

const share = z
  .string()
  .regex(/^(0|1)(\.\d{1,6})?$/, 'a share between 0 and 1, such as 0.2')
  .refine((s) => Number(s) <= 1, 'a share between 0 and 1, such as 0.2');
const amount = z.string().regex(/^\d{1,12}(\.\d{1,4})?$/, 'a non-negative amount, such as 1 or 0.5');

/**
 * What the charge checks compare against: each carrier's published relations (its definition's
 * `charges`) by default. Shares and tolerances are decimal texts, put into SQL as exact DECIMAL literals.
 */
export const ChargeRulesSchema = z.object({
  /** One divisor for every carrier; unset, each carrier's published one (CarrierCharges). */
  volumetricDivisor: z.number().int().positive().optional(),
  /** One fuel share for every carrier; unset, each carrier's published one (CarrierCharges.publishedShares). */
  fuelShare: share.optional(),
  /** One VAT share for every carrier; unset, each carrier's published one. */
  vatShare: share.optional(),
  /** Money differences up to this many dong pass (the carrier rounds shares to whole dong). */
  moneyTolerance: amount.default('1'),
  /** Weight differences up to this many kilograms pass (the carrier rounds weights to 0.01 kg). */
  weightTolerance: amount.default('0.01'),
  /** How far the billed total may be from the order's price quote, in dong. */
  quoteTolerance: amount.default('1'),
});

export type ChargeRules = z.output<typeof ChargeRulesSchema>;

export const DEFAULT_CHARGE_RULES: ChargeRules = ChargeRulesSchema.parse({});

/** What a check's SQL is computed with: the rules, the type money is computed in, and a bound on every amount. */
export interface CheckTerms {
  readonly rules: ChargeRules;
  readonly moneyType: string;
  /** Every amount read is below this in absolute value (see NARROW_MONEY_BOUND); infinity when not known. */
  readonly bound: number;
}

/** Which rule a check's difference is held to: `none` flags any difference once the expected value is known. */
export type CheckTolerance = 'money' | 'weight' | 'quote' | 'none';

/** One charge check: what it compares, how far apart the two may be, and whether the difference is money. */
export interface ChargeCheck {
  readonly name: ChargeCheckName;
  /** What flags an order, in a sentence. */
  readonly what: string;
  /** The billed value: SQL over the order's audit row, and as the docs show it. */
  readonly billed: string;
  readonly billedText: string;
  /** What the billed value should be: SQL over the audit row, and as the docs show it. */
  readonly expected: (terms: CheckTerms) => string;
  readonly expectedText: string;
  readonly tolerance: CheckTolerance;
  readonly toleranceText?: string;
  /** The difference is money, at stake when the check flags (the weight checks carry none). */
  readonly money: boolean;
}

/** The service ids of the carriers' far-region lines, as the checks' descriptions name them. */
const FAR_REGION_SERVICE_IDS = KNOWN_CARRIERS.flatMap((known) => known.charges.farRegionServiceId ?? []);
const FAR_REGION_LINES = FAR_REGION_SERVICE_IDS.join(' or ');
const FAR_REGION_LINES_TEXT = FAR_REGION_SERVICE_IDS.map((id) => `\`${id}\``).join(' or ');

/** The priceInfo components that sum to total_service_cost, nulls as 0. */
const COMPONENTS =
  'coalesce(price, 0) + coalesce(price_fr, 0) + coalesce(far_region_fee_amount, 0) + coalesce(fuel_fee_amount, 0)';

/**
 * The checks, in column order: each has `<name>_flag`, `<name>_expected` and `<name>_difference`
 * columns, a line in the summary and a row in docs/reports.md (`npm run docs:charge-checks`).
 */
export const CHARGE_CHECKS: readonly ChargeCheck[] = [
  {
    name: 'lines_sum',
    what: 'the priceInfo lines do not sum to total_service_cost',
    billed: 'total_service_cost',
    billedText: '`total_service_cost`',
    expected: () => 'lines_total',
    expectedText: "sum of the order's `order_charges.cost` (0 without lines)",
    tolerance: 'money',
    money: true,
  },
  {
    name: 'components_sum',
    what: 'price + price_fr + far_region_fee_amount + fuel_fee_amount + vat_amount differs from total_service_cost',
    billed: 'total_service_cost',
    billedText: '`total_service_cost`',
    expected: ({ moneyType }) => `CAST(${COMPONENTS} + coalesce(vat_amount, 0) AS ${moneyType})`,
    expectedText: '`price + price_fr + far_region_fee_amount + fuel_fee_amount + vat_amount`',
    tolerance: 'money',
    money: true,
  },
  {
    name: 'cal_weight',
    what: 'cal_weight differs from length x width x height / divisor',
    billed: 'cal_weight',
    billedText: '`cal_weight`',
    expected: ({ rules }) =>
      `CASE WHEN length IS NOT NULL AND width IS NOT NULL AND height IS NOT NULL THEN round(length * width * height / ${volumetricDivisor(rules)}, 4) END`,
    expectedText:
      "`round(length × width × height / divisor, 4)`, when all three are known; the divisor is the carrier's published one unless `--volumetric-divisor` gives one",
    tolerance: 'weight',
    money: false,
  },
  {
    name: 'chargeable_weight',
    what: 'weight differs from the larger of real_weight and cal_weight',
    billed: 'weight',
    billedText: '`weight`',
    expected: () => 'greatest(real_weight, cal_weight)',
    expectedText: '`greatest(real_weight, cal_weight)`',
    tolerance: 'weight',
    money: false,
  },
  {
    name: 'fuel',
    what: 'fuel_fee_amount is not the fuel share of price',
    billed: 'fuel_fee_amount',
    billedText: '`fuel_fee_amount`',
    expected: ({ rules, bound }) => withShare(rules.fuelShare, 'fuel', (fuel) => moneyTimesShare('price', fuel, bound)),
    expectedText: '`price × fuel share`',
    tolerance: 'money',
    money: true,
  },
  {
    name: 'vat',
    what: 'vat_amount is not the VAT share of price + price_fr + far_region_fee_amount + fuel_fee_amount',
    billed: 'vat_amount',
    billedText: '`vat_amount`',
    expected: ({ rules, bound }) =>
      withShare(rules.vatShare, 'vat', (vat) => moneyTimesShare(`(${COMPONENTS})`, vat, bound)),
    expectedText: '`(price + price_fr + far_region_fee_amount + fuel_fee_amount) × VAT share`',
    tolerance: 'money',
    money: true,
  },
  {
    name: 'far_region_line',
    what: `far_region_fee_amount differs from the ${FAR_REGION_LINES} priceInfo line (a fee without the line, or the reverse)`,
    billed: 'coalesce(far_region_fee_amount, 0)',
    billedText: '`far_region_fee_amount` (0 if null)',
    expected: () => 'far_region_line_cost',
    expectedText: `the ${FAR_REGION_LINES_TEXT} priceInfo line's cost (0 without it): a fee without the line, or the reverse`,
    tolerance: 'money',
    money: true,
  },
  {
    name: 'quote',
    what: "the total differs from the order's latest price quote (plus any return charge and its VAT)",
    billed: 'total_service_cost',
    billedText: '`total_service_cost`',
    expected: ({ rules, moneyType, bound }) =>
      withShare(
        rules.vatShare,
        'vat',
        (vat) =>
          `CASE WHEN NOT cancelled THEN CAST(quote_total + ${moneyTimesShare('coalesce(price_fr, 0)', sumMoney(['1', vat]), bound)} AS ${moneyType}) END`,
      ),
    expectedText:
      "the order's latest ok `price_quotes` total `+ price_fr × (1 + VAT share)` (a quote cannot know the return charge); none for cancelled orders or orders without a quote",
    tolerance: 'quote',
    money: true,
  },
  {
    name: 'return_not_returned',
    what: 'a return charge (price_fr) on an order that was never returning or returned',
    billed: 'coalesce(price_fr, 0)',
    billedText: '`price_fr` (0 if null)',
    expected: ({ moneyType }) => `CASE WHEN NOT returned THEN CAST(0 AS ${moneyType}) END`,
    expectedText:
      '0, for an order never in a status that is `returning` or `returned` in the neutral set (history or now)',
    tolerance: 'money',
    money: true,
  },
  {
    name: 'cancelled_charged',
    what: 'a charge on a cancelled order',
    billed: 'coalesce(total_service_cost, 0)',
    billedText: '`total_service_cost` (0 if null)',
    expected: ({ moneyType }) => `CASE WHEN cancelled THEN CAST(0 AS ${moneyType}) END`,
    expectedText: '0, for an order in a status that is `cancelled` in the neutral set (history or now)',
    tolerance: 'money',
    money: true,
  },
  {
    name: 'changed_after_delivery',
    what: 'total_service_cost changed after the order was delivered (order_changes)',
    billed: 'total_service_cost',
    billedText: '`total_service_cost`',
    expected: () => 'total_at_delivery',
    expectedText:
      'the total before its first `order_changes` row of `total_service_cost` seen after the time of its status that is `delivered` in the neutral set',
    // A change after delivery is the finding itself, even when the total later went back.
    tolerance: 'none',
    toleranceText: 'none: any such change flags, even when the total went back',
    money: true,
  },
  {
    name: 'invoice',
    what: "the partner's invoiced amount differs from total_service_cost (with --invoices or a query)",
    billed: 'total_service_cost',
    billedText: '`total_service_cost`',
    expected: () => 'invoiced_amount',
    expectedText:
      "the partner's invoiced amount, with `--invoices FILE` (a CSV or `.xlsx`) or a query (`--from-mysql URL --query SQL`, ...), read as `reconcile` reads them; the first readable line per order",
    tolerance: 'money',
    money: true,
  },
];

/** The divisor of cal_weight: the rules' for every carrier, else each carrier's published one. */
function volumetricDivisor(rules: ChargeRules): string {
  if (rules.volumetricDivisor !== undefined) return String(rules.volumetricDivisor);
  const divisors = KNOWN_CARRIERS.map((known) => `WHEN '${known.id}' THEN ${known.charges.volumetricDivisor}`);
  return `(CASE carrier ${divisors.join(' ')} END)`;
}

/**
 * `expected` computed with the rules' share when they give one, else with each carrier's published
 * share; none for a carrier that publishes none.
 */
function withShare(given: string | undefined, of: 'fuel' | 'vat', expected: (share: string) => string): string {
  if (given !== undefined) return expected(given);
  const published = KNOWN_CARRIERS.flatMap((known) => {
    const share = known.charges.publishedShares?.[of];
    return share === undefined ? [] : [`WHEN '${known.id}' THEN ${expected(share)}`];
  });
  return published.length === 0 ? 'NULL' : `(CASE carrier ${published.join(' ')} END)`;
}

/** The check's expected value, for the carriers whose answers allow the check; none for the others. */
function forCarriersChecked(name: ChargeCheckName, expected: string): string {
  const carriers = KNOWN_CARRIERS.filter((known) => known.charges.checks.includes(name));
  if (carriers.length === KNOWN_CARRIERS.length) return expected;
  if (carriers.length === 0) return 'NULL';
  return `CASE WHEN carrier IN (${carriers.map((known) => `'${known.id}'`).join(', ')}) THEN ${expected} END`;
}

/** What a check's difference is held to, in SQL: the rule's tolerance, or none. */
function toleranceOf(check: ChargeCheck, rules: ChargeRules): string | null {
  switch (check.tolerance) {
    case 'money':
      return rules.moneyTolerance;
    case 'weight':
      return rules.weightTolerance;
    case 'quote':
      return rules.quoteTolerance;
    case 'none':
      return null;
  }
}

/** The check's three columns' SQL: expected, difference (billed minus expected) and flag. */
function checkColumnsSql(
  check: ChargeCheck,
  terms: CheckTerms,
): { expected: string; difference: string; flag: string } {
  const { name, billed } = check;
  const tolerance = toleranceOf(check, terms.rules);
  return {
    expected: forCarriersChecked(name, check.expected(terms)),
    difference: check.money
      ? `CAST(${billed} - ${name}_expected AS ${terms.moneyType})`
      : `round(${billed} - ${name}_expected, 4)`,
    // Without a tolerance, any known expected value is a finding; else one beyond it, when known.
    flag:
      tolerance === null ? `${name}_expected IS NOT NULL` : `coalesce(abs(${name}_difference) > ${tolerance}, false)`,
  };
}

/** Money as the warehouse stores it, and as every report file gives it. */
const MONEY = 'DECIMAL(20,4)';
/** DuckDB computes DECIMALs of up to 18 digits in 64-bit integers, far faster than the 128-bit DECIMAL(20,4). */
const NARROW_MONEY = 'DECIMAL(18,4)';
const NARROW_INPUT = 'DECIMAL(15,4)';

/**
 * Below this many dong (in absolute value), every amount a charges report reads fits DECIMAL(15,4),
 * and each sum, difference and share the checks compute fits DECIMAL(18,4): the checks then run in
 * 64-bit decimals and give the same values. One amount at or beyond it makes the report compute in
 * DECIMAL(20,4), as the warehouse stores money.
 */
export const NARROW_MONEY_BOUND = 100_000_000_000;

/** How chargesQuery reads and computes. */
export interface ChargesQueryOptions {
  /** A relation of (order_code, invoiced_amount), one row per order: the partner's invoices to compare. */
  readonly invoices?: string | undefined;
  /** 'computed': the audit rows computed from the rows they come from, which the stored ones must equal. */
  readonly from?: 'stored' | 'computed';
  /**
   * Every amount the scope's orders read is below NARROW_MONEY_BOUND (narrowMoneyQuery says): the
   * money columns then come in 64-bit DECIMALs, the same values (withStoredMoneyTypes gives them
   * their stored types back).
   */
  readonly narrowMoney?: boolean;
}

/** The amounts the checks read of what an order's other rows come to (AUDITED_ORDER_AMOUNTS: of its own row). */
const AUDIT_AMOUNTS = ['lines_total', 'far_region_line_cost', 'quote_total', 'total_at_delivery'];

/** The money columns of a charges row: DECIMAL(20,4) whichever way the checks were computed. */
const MONEY_COLUMNS = [
  ...AUDITED_ORDER_AMOUNTS,
  'quote_total',
  'invoiced_amount',
  ...CHARGE_CHECKS.filter((c) => c.money).flatMap(({ name }) => [`${name}_expected`, `${name}_difference`]),
  'amount_at_stake',
];

/**
 * One row per order with its billed components, weights, and for every check its flag, the expected
 * value and the difference (billed minus expected); then flags_failed and amount_at_stake (the largest
 * money difference among its failed checks). `invoices`, when given, is a relation of
 * (order_code, invoiced_amount) with one row per order. Each order's audit row (the order's own
 * columns, and what its other rows come to) is read from order_charge_audit, or with `from`
 * 'computed' computed from the rows it comes from, which is what the stored one must always equal.
 */
export function chargesQuery(rules: ChargeRules, scope: ReportScope = {}, options: ChargesQueryOptions = {}): string {
  const { invoices, from = 'stored', narrowMoney = false } = options;
  // Every money value a check computes, and its inputs: see NARROW_MONEY_BOUND.
  const moneyType = narrowMoney ? NARROW_MONEY : MONEY;
  const input = (column: string) => (narrowMoney ? `CAST(${column} AS ${NARROW_INPUT})` : column);
  // With narrow money, each amount is below NARROW_MONEY_BOUND, a sum of four below four times it.
  const bound = narrowMoney ? 4 * NARROW_MONEY_BOUND : Number.POSITIVE_INFINITY;
  const audit = from === 'computed' ? computedAuditRows(scope) : storedAuditRows(scope);
  const terms: CheckTerms = { rules, moneyType, bound };
  const checks = new Map(CHARGE_CHECKS.map((check) => [check.name, checkColumnsSql(check, terms)]));
  const expectedColumns = CHARGE_CHECKS.map(({ name }) => `${checks.get(name)!.expected} AS ${name}_expected`).join(
    ',\n           ',
  );
  const differenceColumns = CHARGE_CHECKS.map(
    ({ name }) => `${checks.get(name)!.difference} AS ${name}_difference`,
  ).join(',\n           ');
  const flagColumns = CHARGE_CHECKS.map(({ name }) => `${checks.get(name)!.flag} AS ${name}_flag`).join(
    ',\n           ',
  );
  const checkColumns = CHARGE_CHECKS.map(({ name }) => `${name}_flag, ${name}_expected, ${name}_difference`).join(
    ',\n         ',
  );
  const moneyChecks = CHARGE_CHECKS.filter((c) => c.money).map(
    ({ name }) => `CASE WHEN ${name}_flag THEN abs(${name}_difference) END`,
  );
  return `
    WITH base AS (
      SELECT a.carrier, a.order_code, account_alias, accept_date, order_date, status, status_name, service_type_id,
             ${AUDITED_ORDER_AMOUNTS.map((c) => `${input(c)} AS ${c}`).join(', ')},
             price_info, CAST(lines_total AS ${moneyType}) AS lines_total,
             CAST(far_region_line_cost AS ${moneyType}) AS far_region_line_cost,
             length, width, height, real_weight, cal_weight, weight,
             returned_in_history OR ${neutralStatusIn(['returning', 'returned'])} AS returned,
             cancelled_in_history OR ${neutralStatusIn(['cancelled'])} AS cancelled,
             delivered_at, quote_id, ${input('quote_total')} AS quote_total, ${input('total_at_delivery')} AS total_at_delivery, total_changed_at,
             ${invoices === undefined ? `CAST(NULL AS ${moneyType})` : 'i.invoiced_amount'} AS invoiced_amount
      FROM ${audit} AS a
      ${invoices === undefined ? '' : `LEFT JOIN ${invoices} AS i ON i.order_code = a.order_code`}
    ),
    expected AS (
      SELECT *, ${expectedColumns}
      FROM base
    ),
    differences AS (
      SELECT *, ${differenceColumns}
      FROM expected
    ),
    flagged AS (
      SELECT *, ${flagColumns}
      FROM differences
    )
    SELECT carrier, order_code, account_alias, accept_date, order_date, status, status_name, service_type_id,
           price, price_fr, far_region_fee_amount, fuel_fee_amount, vat_amount, cod_amount, total_service_cost, price_info,
           length, width, height, real_weight, cal_weight, weight,
           returned, cancelled, delivered_at, quote_id, quote_total, total_changed_at, invoiced_amount,
           ${checkColumns},
           ${CHARGE_CHECKS.map(({ name }) => `CAST(${name}_flag AS INTEGER)`).join(' + ')} AS flags_failed,
           CAST(greatest(${moneyChecks.join(', ')}) AS ${moneyType}) AS amount_at_stake
    FROM flagged`;
}

/** Rows of chargesQuery with their money in DECIMAL(20,4), as stored, whichever way they were computed. */
export function withStoredMoneyTypes(charges: string): string {
  return `SELECT * REPLACE (${MONEY_COLUMNS.map((c) => `CAST(${c} AS ${MONEY}) AS ${c}`).join(', ')}) FROM (${charges})`;
}

/**
 * The audit rows of a scope's orders, as stored: they hold the orders' columns the scope limits by,
 * and lie in code order, so the scope's range of codes lets DuckDB skip the row groups outside it.
 */
function storedAuditRows(scope: ReportScope): string {
  const conditions = [codeRangeCondition(scope), scopeCondition(scope, ORDER_COLUMNS)].filter((c) => c !== 'true');
  return conditions.length === 0
    ? CHARGE_AUDIT_TABLE
    : `(SELECT * FROM ${CHARGE_AUDIT_TABLE} WHERE ${conditions.join(' AND ')})`;
}

/** The audit rows of a scope's orders, computed from the rows they come from. */
function computedAuditRows(scope: ReportScope): string {
  const orders = scoped('orders', scope, ORDER_COLUMNS);
  // A scope's orders' rows only: the other tables are read for the codes of the scope, not in full.
  const ofScope = orders === 'orders' ? 'true' : `${codeRangeCondition(scope)} AND ${ofOrdersIn(orders)}`;
  return `(${chargeAuditQuery(orders, ofScope)})`;
}

/** One row, column `narrow`: whether every amount the scope's charges read is below NARROW_MONEY_BOUND. */
export function narrowMoneyQuery(scope: ReportScope): string {
  // A column's minimum and maximum cost less than those of its absolute values, and DuckDB reads them
  // from its statistics when the scope is a table that was never updated.
  const within = [...AUDITED_ORDER_AMOUNTS, ...AUDIT_AMOUNTS].map(
    (c) => `coalesce(max(${c}) < ${NARROW_MONEY_BOUND} AND min(${c}) > -${NARROW_MONEY_BOUND}, true)`,
  );
  return `SELECT ${within.join(' AND ')} AS narrow FROM ${storedAuditRows(scope)}`;
}

/**
 * Per check and per account (and over all accounts, account_alias '*'): the orders it flags and the
 * money at stake (the sum of the absolute differences; none for the weight checks). The check `any`
 * counts orders with at least one flag, at stake their amount_at_stake. `charges` may hold only the
 * flagged orders' rows when `checked` (a relation of the orders checked, with account_alias) is given:
 * the orders checked are counted there, everything else is a sum over flagged rows.
 */
export function chargesSummaryQuery(charges: string, checked = charges): string {
  // Per account and over all, each check's count and sum; then a row per check.
  const totals = CHARGE_CHECKS.map(
    ({ name, money }) =>
      `count(*) FILTER (WHERE ${name}_flag) AS ${name}_flagged, ${money ? `sum(CAST(abs(${name}_difference) AS ${MONEY})) FILTER (WHERE ${name}_flag)` : `CAST(NULL AS ${MONEY})`} AS ${name}_at_stake`,
  );
  const perCheck = CHARGE_CHECKS.map(
    ({ name }, index) =>
      `{check_no: ${index + 1}, check_name: '${name}', orders_flagged: ${name}_flagged, at_stake: ${name}_at_stake}`,
  );
  perCheck.unshift(`{check_no: 0, check_name: 'any', orders_flagged: any_flagged, at_stake: any_at_stake}`);
  return `
    WITH checked AS (
      SELECT account_alias, count(*) AS orders_checked
      FROM ${checked}
      GROUP BY GROUPING SETS ((), (account_alias))
      -- No orders, no rows (the empty grouping set would give one).
      HAVING count(*) > 0
    ),
    flagged AS (
      SELECT account_alias,
             count(*) FILTER (WHERE flags_failed > 0) AS any_flagged, sum(amount_at_stake) FILTER (WHERE flags_failed > 0) AS any_at_stake,
             ${totals.join(',\n             ')}
      FROM ${charges}
      GROUP BY GROUPING SETS ((), (account_alias))
    ),
    totals AS (
      -- The row over all accounts has a null account_alias on both sides.
      SELECT c.account_alias, c.orders_checked, f.* EXCLUDE (account_alias)
      FROM checked AS c LEFT JOIN flagged AS f ON f.account_alias IS NOT DISTINCT FROM c.account_alias
    ),
    per_check AS (
      SELECT account_alias, orders_checked, unnest([${perCheck.join(',\n        ')}], recursive := true)
      FROM totals
    )
    SELECT check_name, coalesce(account_alias, '*') AS account_alias, coalesce(orders_flagged, 0) AS orders_flagged, orders_checked,
           CAST(coalesce(at_stake, 0) AS ${MONEY}) AS amount_at_stake
    FROM per_check
    ORDER BY check_no, account_alias NULLS FIRST`;
}

/** The columns of chargesQuery that chargesSummaryQuery reads. */
const SUMMARY_COLUMNS = [
  'account_alias',
  ...CHARGE_CHECKS.flatMap(({ name }) => [`${name}_flag`, `${name}_difference`]),
  'flags_failed',
  'amount_at_stake',
];

/** The temporary tables a charges run fills once: its flagged orders' rows, and its summary. */
const RUN_FLAGGED = 'report_run_flagged_charges';
const RUN_SUMMARY = 'report_run_charges_summary';

/**
 * The files of a charges report: one row per order (`flaggedOnly`: per order with a flag), and the
 * summary per check and account over every order. One pass computes the checks of every order and
 * keeps the flagged ones, a few in a hundred, from which the summary, the flagged-only file and the
 * page's top orders are read; the orders checked are counted from the audit rows alone. The full file
 * computes the rows again rather than keep them: the checks cost less than holding (and spilling)
 * every order's row. `parts`, scopes that together hold the scope's orders once each, are computed
 * one after another.
 */
export function chargesTables(
  rules: ChargeRules,
  scope: ReportScope,
  options: Pick<ChargesQueryOptions, 'invoices' | 'narrowMoney'> & {
    readonly flaggedOnly?: boolean;
    readonly parts?: readonly ReportScope[];
  } = {},
): ReportTables {
  const parts = options.parts === undefined || options.parts.length === 0 ? [scope] : options.parts;
  const query = { invoices: options.invoices, narrowMoney: options.narrowMoney };
  const charges = parts.map((part) => `SELECT * FROM (${chargesQuery(rules, part, query)})`).join('\nUNION ALL\n');
  const checked = storedAuditRows(scope);
  const rows = options.flaggedOnly ? `SELECT * FROM ${RUN_FLAGGED}` : `SELECT * FROM (${charges})`;
  // The full file computes its rows again: the flagged rows then need only the summary's columns.
  const kept = options.flaggedOnly ? '*' : SUMMARY_COLUMNS.join(', ');
  return {
    // The flagged orders' rows are read in full, summed or sorted: their order does not matter.
    prepareInAnyOrder: true,
    prepare: [
      temporaryTable(RUN_FLAGGED, `SELECT ${kept} FROM (${charges}) WHERE flags_failed > 0`),
      temporaryTable(RUN_SUMMARY, chargesSummaryQuery(RUN_FLAGGED, checked)),
    ],
    tables: [
      // One row per order in no particular order: an order would cost the writer a sort of every row.
      {
        name: 'charges',
        ...(options.narrowMoney ? { query: withStoredMoneyTypes(rows), valuesQuery: rows } : { query: rows }),
        anyOrder: true,
      },
      { name: 'charges-summary', query: `SELECT * FROM ${RUN_SUMMARY}` },
    ],
  };
}
