import { neutralStatusIn } from '../carriers/carrier-definition-sql.js';
import { sqlText } from '../warehouse/sql-literals.js';
import { carrierDate, type ReportTables, temporaryTable } from './report-sql.js';

/** The rules of the COD checks (settings `cod.unpaidAfterDays`, `cod.moneyTolerance`). */
export interface CodRules {
  /** A delivered COD order with no payout line this many carrier days after its delivery is a finding. */
  readonly unpaidAfterDays: number;
  /** Money differences up to this many dong pass. */
  readonly moneyTolerance: number;
}

/** The rules by default: a week to pay; none of a statement's exact arithmetic passes. */
export const DEFAULT_COD_RULES: CodRules = { unpaidAfterDays: 7, moneyTolerance: 0 };

/** What a check's SQL is computed with: the rules and the carrier day the report is run on. */
export interface CodTerms {
  readonly rules: CodRules;
  /** A DATE literal: the carrier day of the report's "now". */
  readonly today: string;
  /** A relation of (order_code, expected_cod), one row per order: the shop's own COD; none when not given. */
  readonly shopCod?: string | undefined;
}

/**
 * One COD check: what flags, the formula the docs show, and its SQL. The SQL gives the columns of
 * FINDING_COLUMNS (finding included), one row per finding, over the run's lines (RUN_LINES), its
 * orders (RUN_ORDERS), its batches (RUN_BATCHES) and the outstanding orders (RUN_OUTSTANDING).
 */
export interface CodCheck {
  readonly name: string;
  /** What flags, in a sentence. */
  readonly what: string;
  /** What one finding is about: an order, a statement line, a batch or a bank deposit. */
  readonly per: 'order' | 'line' | 'batch' | 'deposit';
  /** The two amounts compared, as the docs show them. */
  readonly actualText: string;
  readonly expectedText: string;
  readonly sql: (terms: CodTerms) => string;
}

/** The columns of a finding, in the file's order. Money is whole VND. */
const FINDING_COLUMNS = [
  'finding',
  'carrier',
  'account_alias',
  'batch_id',
  'order_code',
  'finding_day',
  'actual',
  'expected',
  'difference',
  'at_stake',
  'days_outstanding',
  'aging',
  'detail',
] as const;

/** The run's statement lines, each with its order's account, status and history as the audit rows have them. */
const RUN_LINES = 'report_run_cod_lines';
/** The run's delivered COD orders with no COD line, with their days since delivery. */
const RUN_OUTSTANDING = 'report_run_cod_outstanding';
/** The run's findings: written to the file, summed per check, carrier and account. */
const RUN_COD_FINDINGS = 'report_run_cod_findings';

/** Whole VND of a DECIMAL amount of the warehouse. */
function wholeVnd(amount: string): string {
  return `CAST(round(coalesce(${amount}, 0)) AS BIGINT)`;
}

/** The aging bucket of a number of days outstanding. */
const AGING_BUCKETS = ['0-7 days', '8-14 days', '15-30 days', 'over 30 days'] as const;

function agingOf(days: string): string {
  return `CASE WHEN ${days} <= 7 THEN '${AGING_BUCKETS[0]}' WHEN ${days} <= 14 THEN '${AGING_BUCKETS[1]}'
               WHEN ${days} <= 30 THEN '${AGING_BUCKETS[2]}' ELSE '${AGING_BUCKETS[3]}' END`;
}

/** The account of a batch: its orders' one account, none when they have several or none. */
const BATCH_ACCOUNT = 'CASE WHEN count(DISTINCT account_alias) = 1 THEN min(account_alias) END';

/** Per carrier and batch: its day, account, lines, net paid, what its lines owe and its stated total. */
const RUN_BATCHES = 'report_run_cod_batches';
const BATCHES_QUERY = `
  SELECT carrier, batch_id, min(batch_date) AS batch_date, ${BATCH_ACCOUNT} AS account_alias, count(*) AS lines,
         sum(net_paid) AS paid, sum(cod_collected) - sum(fees_withheld) - sum(debts) AS owed,
         max(batch_stated_total) AS stated
  FROM ${RUN_LINES} GROUP BY carrier, batch_id`;

/**
 * Per carrier and order, over its lines in every batch: its tracked order's account, status and
 * billed total, what was withheld (its COD fee aside), the COD collected and on how many lines, its
 * return fees. One pass over the lines serves every check of an order.
 */
const RUN_ORDERS = 'report_run_cod_orders';
const ORDERS_QUERY = `
  SELECT carrier, order_code, any_value(account_alias) AS account_alias, any_value(status) AS status,
         any_value(status_name) AS status_name, bool_or(tracked) AS tracked, bool_or(returned) AS returned,
         any_value(billed) AS billed, max(batch_date) AS last_day, count(*) AS lines,
         sum(fees_withheld - cod_fee + debts) AS withheld, bool_or(fees_withheld <> 0 OR debts <> 0) AS charged,
         coalesce(sum(cod_collected) FILTER (WHERE line_kind = 'cod'), 0) AS collected,
         count(*) FILTER (WHERE line_kind = 'cod' AND cod_collected <> 0) AS paid_lines,
         sum(return_fee) AS return_fee
  FROM ${RUN_LINES} GROUP BY carrier, order_code`;

/**
 * Per order paid on several COD lines (few orders: their lines only are read): the COD of its first
 * line, by batch date then batch id, and its batches in that order.
 */
const PAID_AGAIN = `(
  SELECT carrier, order_code, arg_min(cod_collected, (batch_date, batch_id)) AS first_paid,
         array_to_string(list(batch_id ORDER BY batch_date, batch_id), ', ') AS batches
  FROM ${RUN_LINES}
  SEMI JOIN (SELECT carrier, order_code FROM ${RUN_ORDERS} WHERE paid_lines > 1) USING (carrier, order_code)
  WHERE line_kind = 'cod' AND cod_collected <> 0
  GROUP BY carrier, order_code)`;

/** The days after a batch's day its deposit may reach the shop's bank account. */
const DEPOSIT_DAYS = 3;

/** Whether the deposit `x` pays the batch `b`: its amount within the tolerance, on the batch's day or the days after. */
function depositMatches(x: string, b: string, rules: CodRules): string {
  return `abs(${x}.amount - ${b}.paid) <= ${rules.moneyTolerance}
          AND ${x}.deposit_day BETWEEN ${b}.batch_date AND ${b}.batch_date + ${DEPOSIT_DAYS}`;
}

/** A difference beyond the tolerance. */
function differs(actual: string, expected: string, rules: CodRules): string {
  return `abs((${actual}) - (${expected})) > ${rules.moneyTolerance}`;
}

/** A finding row of FINDING_COLUMNS from its values' SQL; those not given are null. */
function finding(name: string, values: Partial<Record<(typeof FINDING_COLUMNS)[number], string>>): string {
  const typed: Record<string, string> = {
    actual: 'BIGINT',
    expected: 'BIGINT',
    difference: 'BIGINT',
    at_stake: 'BIGINT',
    days_outstanding: 'INTEGER',
    finding_day: 'DATE',
  };
  return FINDING_COLUMNS.map((column) => {
    if (column === 'finding') return `'${name}' AS finding`;
    const value = values[column] ?? 'NULL';
    return `CAST(${value} AS ${typed[column] ?? 'VARCHAR'}) AS ${column}`;
  }).join(', ');
}

/** The statuses of an order that is not delivered: never paid COD for. */
const NOT_DELIVERED = `NOT ${neutralStatusIn(['delivered'])}`;

/**
 * The checks, in the report's order: each is a kind of finding, a line in the summary and a row in
 * docs/reports.md (`npm run docs:charge-checks` writes it).
 */
export const COD_CHECKS: readonly CodCheck[] = [
  {
    name: 'unpaid_delivered',
    what: 'a delivered order with COD and no COD line in any statement, more than --unpaid-after-days after its delivery',
    per: 'order',
    actualText: '0 (nothing paid)',
    expectedText:
      "the order's `cod_amount`, when its status is `delivered` in the neutral set and its delivery day is more than N days before today; `detail` says what the carrier's answer says of the money (GHN: collected, transferred to the shop, when)",
    sql: ({ rules }) => `
      SELECT ${finding('unpaid_delivered', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        order_code: 'order_code',
        finding_day: 'delivered_day',
        actual: '0',
        expected: 'cod',
        difference: '-cod',
        at_stake: 'cod',
        days_outstanding: 'days',
        aging: 'aging',
        detail: `'delivered ' || days || ' days ago, no payout line' || ${CARRIER_SAYS}`,
      })}
      FROM ${RUN_OUTSTANDING} WHERE days > ${rules.unpaidAfterDays}`,
  },
  {
    name: 'line_net',
    what: "a line's net paid is not its COD collected less its fees withheld and debts",
    per: 'line',
    actualText: '`net_paid`',
    expectedText: '`cod_collected − fees_withheld − debts`',
    sql: ({ rules }) => `
      SELECT ${finding('line_net', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        batch_id: 'batch_id',
        order_code: 'order_code',
        finding_day: 'batch_date',
        actual: 'net_paid',
        expected: 'cod_collected - fees_withheld - debts',
        difference: 'net_paid - (cod_collected - fees_withheld - debts)',
        at_stake: 'abs(net_paid - (cod_collected - fees_withheld - debts))',
        detail: `line_kind || ' line'`,
      })}
      FROM ${RUN_LINES} WHERE ${differs('net_paid', 'cod_collected - fees_withheld - debts', rules)}`,
  },
  {
    name: 'batch_net',
    what: "a batch's net paid is not its COD collected less its fees withheld and debts",
    per: 'batch',
    actualText: '`Σ net_paid` of the batch',
    expectedText: '`Σ cod_collected − Σ fees_withheld − Σ debts` of the batch',
    sql: ({ rules }) => `
      SELECT ${finding('batch_net', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        batch_id: 'batch_id',
        finding_day: 'batch_date',
        actual: 'paid',
        expected: 'owed',
        difference: 'paid - owed',
        at_stake: 'abs(paid - owed)',
        detail: `lines || ' lines'`,
      })}
      FROM ${RUN_BATCHES} WHERE ${differs('paid', 'owed', rules)}`,
  },
  {
    name: 'batch_total',
    what: "a batch's stated total (when the statement gives one) is not the sum of its lines' net paid",
    per: 'batch',
    actualText: 'the batch stated total',
    expectedText: '`Σ net_paid` of the batch',
    sql: ({ rules }) => `
      SELECT ${finding('batch_total', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        batch_id: 'batch_id',
        finding_day: 'batch_date',
        actual: 'stated',
        expected: 'paid',
        difference: 'stated - paid',
        at_stake: 'abs(stated - paid)',
        detail: `'stated total of ' || lines || ' lines'`,
      })}
      FROM ${RUN_BATCHES} WHERE stated IS NOT NULL AND ${differs('stated', 'paid', rules)}`,
  },
  {
    name: 'fees_withheld',
    what: 'what the statements withheld for an order, netted over every batch, is not the total its tracking answer bills',
    per: 'order',
    actualText:
      "`Σ (fees_withheld − the COD fee) + Σ debts` over the order's lines in every batch (a refund line's negative fees net out)",
    expectedText:
      "the order's `total_service_cost` (the charge audit's); checked for a tracked order with any fee or debt on its lines. The COD collection fee (`cod` type) is not in the tracking answer and is not compared",
    sql: ({ rules }) => `
      SELECT ${finding('fees_withheld', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        order_code: 'order_code',
        finding_day: 'last_day',
        actual: 'withheld',
        expected: 'billed',
        difference: 'withheld - billed',
        at_stake: 'abs(withheld - billed)',
        detail: `'withheld over ' || lines || ' lines, billed ' || billed`,
      })}
      FROM ${RUN_ORDERS} WHERE tracked AND charged AND ${differs('withheld', 'billed', rules)}`,
  },
  {
    name: 'paid_not_delivered',
    what: 'COD paid for a tracked order whose status is not delivered (returned, cancelled, lost, or still on its way)',
    per: 'order',
    actualText: "`Σ cod_collected` of the order's COD lines",
    expectedText: '0, for an order whose status is not `delivered` in the neutral set',
    sql: () => `
      SELECT ${finding('paid_not_delivered', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        order_code: 'order_code',
        finding_day: 'last_day',
        actual: 'collected',
        expected: '0',
        difference: 'collected',
        at_stake: 'abs(collected)',
        detail: `'paid COD, status ' || status || coalesce(' ' || status_name, '')`,
      })}
      FROM ${RUN_ORDERS} WHERE tracked AND ${NOT_DELIVERED} AND collected <> 0`,
  },
  {
    name: 'paid_twice',
    what: "an order's COD paid in two or more batches",
    per: 'order',
    actualText: "`Σ cod_collected` of the order's COD lines over its batches",
    expectedText: 'the `cod_collected` of its first batch (by batch date, then batch id)',
    sql: () => `
      SELECT ${finding('paid_twice', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        order_code: 'order_code',
        finding_day: 'last_day',
        actual: 'collected',
        expected: 'first_paid',
        difference: 'collected - first_paid',
        at_stake: 'abs(collected - first_paid)',
        detail: `'paid in batches ' || batches`,
      })}
      FROM ${RUN_ORDERS} AS o JOIN ${PAID_AGAIN} AS p USING (carrier, order_code)`,
  },
  {
    name: 'return_fee_not_returned',
    what: 'a return fee withheld (netted over batches) for a tracked order never returning or returned',
    per: 'order',
    actualText: "`Σ` the order's fees of type `return` over its lines",
    expectedText:
      '0, for an order never in a status that is `returning` or `returned` in the neutral set (history or now)',
    sql: ({ rules }) => `
      SELECT ${finding('return_fee_not_returned', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        order_code: 'order_code',
        finding_day: 'last_day',
        actual: 'return_fee',
        expected: '0',
        difference: 'return_fee',
        at_stake: 'abs(return_fee)',
        detail: `'return fee, status ' || status || coalesce(' ' || status_name, '')`,
      })}
      FROM ${RUN_ORDERS} WHERE tracked AND NOT returned AND ${differs('return_fee', '0', rules)}`,
  },
  {
    name: 'shop_cod',
    what: "the COD a statement says was collected for an order is not the COD the shop's own records expect (with --partner or a query)",
    per: 'order',
    actualText:
      "the `cod_collected` of the order's COD line, its first (by batch date, then batch id) when it has several: a COD paid again is `paid_twice`'s",
    expectedText:
      "the shop's `cod_amount` for the order, its records read as `reconcile` reads them (`--partner FILE`, `--from-mysql URL --query SQL`, ...; the first readable line per order), for an order with a COD line",
    sql: ({ rules, shopCod }) =>
      shopCod === undefined
        ? `SELECT ${finding('shop_cod', {})} WHERE false`
        : `
      SELECT ${finding('shop_cod', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        order_code: 'order_code',
        finding_day: 'last_day',
        actual: 'first_collected',
        expected: 'expected',
        difference: 'first_collected - expected',
        at_stake: 'abs(first_collected - expected)',
        detail: `'the shop expects ' || expected`,
      })}
      FROM (
        SELECT o.*, ${wholeVnd('s.expected_cod')} AS expected, coalesce(p.first_paid, o.collected) AS first_collected
        FROM ${RUN_ORDERS} AS o JOIN ${shopCod} AS s ON s.order_code = o.order_code
        LEFT JOIN ${PAID_AGAIN} AS p ON p.carrier = o.carrier AND p.order_code = o.order_code
        WHERE o.paid_lines > 0
      ) WHERE ${differs('first_collected', 'expected', rules)}`,
  },
  {
    name: 'batch_not_deposited',
    what: `a batch's net paid (above 0) that no bank deposit of that amount (within the tolerance) on its day or the ${DEPOSIT_DAYS} days after matches (with payouts deposits)`,
    per: 'batch',
    actualText: '0 (no deposit found)',
    expectedText: `\`Σ net_paid\` of the batch; checked for a batch whose day and the ${DEPOSIT_DAYS} days after lie within the days of the deposits imported`,
    sql: ({ rules }) => `
      SELECT ${finding('batch_not_deposited', {
        carrier: 'carrier',
        account_alias: 'account_alias',
        batch_id: 'batch_id',
        finding_day: 'batch_date',
        actual: '0',
        expected: 'paid',
        difference: '-paid',
        at_stake: 'paid',
        detail: `'no deposit of ' || paid || ' by ' || (batch_date + ${DEPOSIT_DAYS})`,
      })}
      FROM ${RUN_BATCHES} AS b, (SELECT min(deposit_day) AS first_day, max(deposit_day) AS last_day FROM bank_deposits) AS d
      WHERE b.paid > 0 AND b.batch_date >= d.first_day AND b.batch_date + ${DEPOSIT_DAYS} <= d.last_day
        AND NOT EXISTS (
          SELECT 1 FROM bank_deposits AS x
          WHERE ${depositMatches('x', 'b', rules)})`,
  },
  {
    name: 'deposit_without_batch',
    what: `a bank deposit (with payouts deposits) that no batch's net paid of that amount (within the tolerance) on its day or the ${DEPOSIT_DAYS} days before matches`,
    per: 'deposit',
    actualText: "the deposit's amount",
    expectedText: `0 (no batch); checked for a deposit on the days from the first batch's day to ${DEPOSIT_DAYS} days after the last's. Its reference is in \`detail\`; it has no carrier, account, batch or order`,
    sql: ({ rules }) => `
      SELECT ${finding('deposit_without_batch', {
        finding_day: 'deposit_day',
        actual: 'amount',
        expected: '0',
        difference: 'amount',
        at_stake: 'amount',
        detail: `'deposit: ' || reference`,
      })}
      FROM bank_deposits AS x, (SELECT min(batch_date) AS first_day, max(batch_date) AS last_day FROM ${RUN_BATCHES}) AS d
      WHERE x.deposit_day >= d.first_day AND x.deposit_day <= d.last_day + ${DEPOSIT_DAYS}
        AND NOT EXISTS (SELECT 1 FROM ${RUN_BATCHES} AS b WHERE b.paid > 0 AND ${depositMatches('x', 'b', rules)})`,
  },
];

/**
 * The run's lines: every stored statement line with its COD and return fees (of payout_line_fees)
 * and its order's account, status, billed total and history, from the order's audit row; `tracked`
 * says the warehouse has the order.
 */
function runLinesQuery(): string {
  return `
    WITH fees AS (
      SELECT carrier, batch_id, order_code, line_kind,
             sum(amount) FILTER (WHERE fee_type = 'cod') AS cod_fee,
             sum(amount) FILTER (WHERE fee_type = 'return') AS return_fee
      FROM payout_line_fees WHERE fee_type IN ('cod', 'return')
      GROUP BY carrier, batch_id, order_code, line_kind
    )
    SELECT l.carrier, l.batch_id, l.order_code, l.line_kind, l.batch_date, l.batch_stated_total,
           l.cod_collected, l.fees_withheld, l.debts, l.net_paid,
           coalesce(f.cod_fee, 0) AS cod_fee, coalesce(f.return_fee, 0) AS return_fee,
           a.order_code IS NOT NULL AS tracked, a.account_alias, a.status, a.status_name,
           ${wholeVnd('a.total_service_cost')} AS billed,
           coalesce(a.returned_in_history OR ${neutralStatusIn(['returning', 'returned'], 'a.status', 'a.carrier')}, false) AS returned
    FROM payout_lines AS l
    LEFT JOIN fees AS f USING (carrier, batch_id, order_code, line_kind)
    LEFT JOIN order_charge_audit AS a ON a.carrier = l.carrier AND a.order_code = l.order_code`;
}

/**
 * The delivered orders with COD and no COD line in any statement, with the carrier day of their
 * delivery (of the delivered status, else the order's date) and the days since, until `today`, and
 * what the carrier's answer says of the money where it says anything (orders' COD facts).
 */
function outstandingQuery(today: string): string {
  const deliveredDay = carrierDate('coalesce(delivered_at, order_date)');
  const outstanding = `
    SELECT carrier, order_code, account_alias, ${wholeVnd('cod_amount')} AS cod, ${deliveredDay} AS delivered_day,
           greatest(date_diff('day', ${deliveredDay}, ${today}), 0) AS days,
           ${agingOf(`greatest(date_diff('day', ${deliveredDay}, ${today}), 0)`)} AS aging
    FROM order_charge_audit AS a
    WHERE ${neutralStatusIn(['delivered'])} AND cod_amount > 0
      AND NOT EXISTS (SELECT 1 FROM payout_lines AS p WHERE p.carrier = a.carrier AND p.order_code = a.order_code AND p.line_kind = 'cod')`;
  // Few orders are outstanding: the orders' scan is filtered by their codes.
  return `
    WITH outstanding AS MATERIALIZED (${outstanding})
    SELECT u.*, o.cod_collected, o.cod_collected_at, o.cod_transferred, o.cod_transferred_at
    FROM outstanding AS u
    LEFT JOIN (SELECT carrier, order_code, cod_collected, cod_collected_at, cod_transferred, cod_transferred_at
               FROM orders WHERE order_code IN (SELECT order_code FROM outstanding)) AS o
      ON o.carrier = u.carrier AND o.order_code = u.order_code`;
}

/** What an outstanding order's carrier says of its COD money, as a sentence for `detail`; '' when it says nothing. */
const CARRIER_SAYS = `CASE
  WHEN cod_transferred THEN '; the carrier says it transferred the COD' || coalesce(' on ' || CAST(${carrierDate('cod_transferred_at')} AS VARCHAR), '')
  WHEN cod_collected THEN '; the carrier says it collected the COD' || coalesce(' on ' || CAST(${carrierDate('cod_collected_at')} AS VARCHAR), '') || ', not transferred'
  WHEN cod_collected = false THEN '; the carrier says it has not collected the COD'
  ELSE '' END`;

/** What a COD report covers: its days (of each finding's day) and one account; absent means no limit. */
export interface CodScope {
  readonly fromDay?: string | undefined;
  readonly toDay?: string | undefined;
  readonly account?: string | undefined;
  readonly carrier?: string | undefined;
}

/** The condition keeping the rows of a scope whose day is `dayColumn`; `true` when none. */
function codScopeCondition(scope: CodScope, dayColumn: string | null): string {
  const conditions: string[] = [];
  if (dayColumn !== null && scope.fromDay !== undefined)
    conditions.push(`${dayColumn} >= DATE ${sqlText(scope.fromDay)}`);
  if (dayColumn !== null && scope.toDay !== undefined) conditions.push(`${dayColumn} <= DATE ${sqlText(scope.toDay)}`);
  if (scope.account !== undefined) conditions.push(`account_alias = ${sqlText(scope.account)}`);
  if (scope.carrier !== undefined) conditions.push(`carrier = ${sqlText(scope.carrier)}`);
  return conditions.length === 0 ? 'true' : conditions.join(' AND ');
}

/** A finding's identity as its mark stores it (finding, carrier, batch, order; '' for none), of the finding `f`. */
const FINDING_KEY = "f.finding, f.carrier, coalesce(f.batch_id, ''), coalesce(f.order_code, '')";

/**
 * The findings with the mark finance gave each (cod_finding_marks): its mark, note, who and when, the
 * money at stake it was marked at, and the money still open: none for a finding settled at its
 * amount now; a settled finding whose amount has moved since counts again. The amount of a finding is
 * that of every finding of its identity (the lines of one order and batch a line check flags).
 */
function markedFindingsQuery(findings: string): string {
  return `
    WITH found AS MATERIALIZED (${findings}),
    marked AS (
      SELECT f.finding, f.carrier, coalesce(f.batch_id, '') AS batch_key, coalesce(f.order_code, '') AS order_key,
             any_value(m.mark) AS mark, any_value(m.note) AS note, any_value(m.marked_by) AS marked_by,
             any_value(m.marked_at) AS marked_at, any_value(m.at_stake) AS marked_at_stake,
             sum(f.at_stake) AS key_at_stake
      FROM found AS f JOIN cod_finding_marks AS m ON (m.finding, m.carrier, m.batch_id, m.order_code) = (${FINDING_KEY})
      GROUP BY ALL
    )
    SELECT f.*, m.mark, m.note AS mark_note, m.marked_by, m.marked_at, m.marked_at_stake,
           CASE WHEN m.mark = 'settled' AND m.marked_at_stake = m.key_at_stake THEN CAST(0 AS BIGINT)
                ELSE f.at_stake END AS open_at_stake
    FROM found AS f LEFT JOIN marked AS m ON (m.finding, m.carrier, m.batch_key, m.order_key) = (${FINDING_KEY})`;
}

/** Per finding identity (finding, carrier, batch_id and order_code, '' for none): the money at stake now. */
export const FINDING_AMOUNTS_QUERY = `
  SELECT f.finding, f.carrier, coalesce(f.batch_id, '') AS batch_id, coalesce(f.order_code, '') AS order_code,
         sum(f.at_stake) AS at_stake
  FROM ${RUN_COD_FINDINGS} AS f WHERE f.carrier IS NOT NULL GROUP BY ALL`;

/** The carrier and account of a summary's row over all of them. */
const ALL = "'*'";

/**
 * Per check, carrier and account (and over all carriers and accounts, '*'): the findings, those
 * disputed and those settled, and the money at stake (the sum of the findings' open_at_stake: a
 * settled finding's money is not), the most money first.
 */
function codSummaryQuery(findings: string): string {
  const checks = COD_CHECKS.map(({ name }, index) => `('${name}', ${index + 1})`).join(', ');
  return `
    WITH per AS (
      SELECT finding AS check_name, CASE WHEN grouping(carrier) = 1 THEN ${ALL} ELSE carrier END AS carrier,
             CASE WHEN grouping(account_alias) = 1 THEN ${ALL} ELSE account_alias END AS account_alias,
             grouping(carrier, account_alias) AS level, count(*) AS findings,
             count(*) FILTER (WHERE mark = 'disputed') AS disputed,
             count(*) FILTER (WHERE mark = 'settled' AND open_at_stake = 0) AS settled,
             sum(open_at_stake) AS at_stake
      FROM ${findings}
      GROUP BY GROUPING SETS ((finding), (finding, carrier, account_alias))
    )
    SELECT per.check_name, per.carrier, per.account_alias, per.findings, per.disputed, per.settled,
           CAST(per.at_stake AS BIGINT) AS at_stake
    FROM per JOIN (VALUES ${checks}) AS c(check_name, check_no) ON c.check_name = per.check_name
    ORDER BY per.level DESC, per.at_stake DESC, c.check_no, per.carrier, per.account_alias`;
}

/** Per carrier, account and aging bucket: the delivered COD orders no statement paid, and their money. */
function outstandingByAgingQuery(scope: CodScope): string {
  const buckets = AGING_BUCKETS.map((bucket, index) => `('${bucket}', ${index})`).join(', ');
  return `
    SELECT o.carrier, o.account_alias, o.aging, count(*) AS orders, CAST(sum(o.cod) AS BIGINT) AS outstanding
    FROM ${RUN_OUTSTANDING} AS o JOIN (VALUES ${buckets}) AS b(aging, bucket_no) ON b.aging = o.aging
    WHERE ${codScopeCondition(scope, 'o.delivered_day')}
    GROUP BY o.carrier, o.account_alias, o.aging, b.bucket_no
    ORDER BY o.carrier, o.account_alias, b.bucket_no`;
}

/**
 * The files of a COD report: its findings (the most money at stake first), the summary per check,
 * carrier and account, and the money outstanding per aging bucket. The lines with their orders and
 * the outstanding orders are computed once, set-wise, and every check reads them.
 */
export function codTables(rules: CodRules, scope: CodScope, today: string, shopCod?: string): ReportTables {
  const terms: CodTerms = { rules, today, shopCod };
  const findings = COD_CHECKS.map((check) => `SELECT * FROM (${check.sql(terms)})`).join('\nUNION ALL\n');
  return {
    prepareInAnyOrder: true,
    prepare: [
      temporaryTable(RUN_LINES, runLinesQuery()),
      temporaryTable(RUN_ORDERS, ORDERS_QUERY),
      temporaryTable(RUN_BATCHES, BATCHES_QUERY),
      temporaryTable(RUN_OUTSTANDING, outstandingQuery(today)),
      temporaryTable(
        RUN_COD_FINDINGS,
        markedFindingsQuery(`SELECT * FROM (${findings}) WHERE ${codScopeCondition(scope, 'finding_day')}`),
      ),
    ],
    tables: [
      {
        name: 'cod',
        query: `SELECT * FROM ${RUN_COD_FINDINGS}
                ORDER BY open_at_stake DESC, at_stake DESC, finding, carrier, batch_id NULLS FIRST, order_code NULLS FIRST`,
      },
      { name: 'cod-summary', query: codSummaryQuery(RUN_COD_FINDINGS) },
      { name: 'cod-outstanding', query: outstandingByAgingQuery(scope) },
    ],
  };
}
