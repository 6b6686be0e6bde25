import { z } from 'zod';
import { TRACKING_ERROR } from '../carrier/contract.js';
import { PARTNER_RECORDS } from './partner-records.js';
import { type ReportScope, type ReportTables, scoped, temporaryTable } from './report-sql.js';

export const ReconcileRulesSchema = z.object({
  /** Money differences up to this many dong pass. */
  moneyTolerance: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,4})?$/, 'a non-negative amount, such as 1')
    .default('1'),
});

export type ReconcileRules = z.output<typeof ReconcileRulesSchema>;

/** The kinds of finding, in the order the report lists them. */
export const FINDING_KINDS = [
  {
    kind: 'bad_partner_line',
    what: 'a line of the partner records without an order code, or with an amount or status that cannot be read',
  },
  {
    kind: 'unknown_to_carrier',
    what: 'the partner has the order; the warehouse has no orders row for it, or its last lookup answered not found or another account',
  },
  {
    kind: 'missing_from_partner',
    what: 'the warehouse tracks the order (within --from/--to and --account); the partner records do not have it',
  },
  {
    kind: 'duplicate_line',
    what: 'the order is on two or more lines of the partner records (the first line is the one compared)',
  },
  {
    kind: 'status_mismatch',
    what: "expected_status (a code such as 30 or a name such as PHATTHANHCONG) differs from the order's status",
  },
  { kind: 'invoice_mismatch', what: 'invoiced_amount differs from total_service_cost' },
  { kind: 'cod_mismatch', what: 'cod_amount differs from the cod_amount the carrier shows' },
] as const;

const MONEY = 'DECIMAL(20,4)';

/**
 * A partner's amount text as money, null when it is not one. Parsed as DECIMAL(18,4) (held in 64
 * bits): DuckDB parses text straight to the 128-bit DECIMAL(20,4) far more slowly.
 */
function amountOf(text: string): string {
  return `CAST(TRY_CAST(${text} AS DECIMAL(18,4)) AS ${MONEY})`;
}

/**
 * The partner's lines (PARTNER_RECORDS) read: amounts as DECIMAL, the expected status as a status code
 * (matched by code, name or Vietnamese display name), and whether the line can be read at all.
 */
export function partnerLinesQuery(): string {
  return `
    SELECT p.*, ${amountOf('p.invoiced_amount')} AS invoiced, ${amountOf('p.cod_amount')} AS cod,
           s.code AS expected_code,
           CASE
             WHEN p.order_code IS NULL THEN 'no order_code'
             WHEN p.invoiced_amount IS NOT NULL AND ${amountOf('p.invoiced_amount')} IS NULL THEN 'invoiced_amount is not an amount: ' || p.invoiced_amount
             WHEN p.cod_amount IS NOT NULL AND ${amountOf('p.cod_amount')} IS NULL THEN 'cod_amount is not an amount: ' || p.cod_amount
             WHEN p.expected_status IS NOT NULL AND s.code IS NULL THEN 'expected_status is not a status: ' || p.expected_status
           END AS problem
    FROM ${PARTNER_RECORDS} AS p
    LEFT JOIN (
      SELECT DISTINCT lower(spelling) AS spelling, code
      FROM (SELECT code, unnest([code, name, display_name]) AS spelling FROM status_codes)
    ) AS s ON s.spelling = lower(p.expected_status)`;
}

/** Per order the partner lists, its first readable line's invoiced amount: what `charges --invoices` compares. */
export function partnerInvoicesQuery(): string {
  return `
    (SELECT order_code, invoiced AS invoiced_amount FROM (${partnerLinesQuery()})
     WHERE problem IS NULL AND invoiced IS NOT NULL
     QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY line_no) = 1)`;
}

/** Each order code's latest lookup result. */
function lastLookupQuery(): string {
  return `
      SELECT order_code, account_alias, outcome, error_code, finished_at FROM lookup_results
      QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY finished_at DESC, run_id DESC) = 1`;
}

/**
 * What the warehouse knows of each order code, the side reconcile compares the partner's records
 * with: tracked or not, status, total and COD, and the latest lookup's outcome and error code.
 */
export function carrierRecordsQuery(): string {
  return `
    WITH last_lookup AS (${lastLookupQuery()})
    SELECT coalesce(o.order_code, l.order_code) AS order_code, coalesce(o.account_alias, l.account_alias) AS account_alias,
           o.order_code IS NOT NULL AS tracked, o.status, o.status_name, o.total_service_cost, o.cod_amount, o.accept_date,
           l.outcome AS last_lookup_outcome, l.error_code AS last_lookup_error, l.finished_at AS last_lookup_at,
           o.order_code IS NULL OR coalesce(l.error_code IN ('${TRACKING_ERROR.ORDERCODE_NOT_FOUND}', '${TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT}'), false) AS unknown_to_carrier
    FROM orders AS o FULL OUTER JOIN last_lookup AS l ON l.order_code = o.order_code`;
}

/**
 * One row per finding: finding, order_code, account_alias, partner_lines (where in the partner's
 * records), partner_value, carrier_value, difference (money findings: partner minus carrier) and detail.
 */
export function reconcileQuery(rules: ReconcileRules, scope: ReportScope = {}): string {
  const tolerance = rules.moneyTolerance;
  const orders = scoped('orders', scope, { time: 'accept_date', account: 'account_alias' });
  return `
    WITH partner AS (${partnerLinesQuery()}),
    readable AS (SELECT * FROM partner WHERE problem IS NULL),
    counted AS (
      SELECT order_code, count(*) AS lines, min(line_no) AS line_no FROM readable GROUP BY order_code
    ),
    -- Only orders with several lines list them all: a list per order costs more than the rest of the report.
    listed AS (
      SELECT order_code, array_to_string(list_transform(list_sort(list({line_no: line_no, origin: origin})), line -> line.origin), ', ') AS all_origins
      FROM readable WHERE order_code IN (SELECT order_code FROM counted WHERE lines > 1)
      GROUP BY order_code
    ),
    per_order AS (
      -- The first line of each order is the one compared; all of them are named.
      SELECT c.order_code, c.lines, c.line_no,
             {expected_status: r.expected_status, expected_code: r.expected_code, invoiced: r.invoiced, cod: r.cod} AS first_line,
             coalesce(l.all_origins, r.origin) AS all_origins
      FROM counted AS c
      JOIN readable AS r ON r.line_no = c.line_no
      LEFT JOIN listed AS l ON l.order_code = c.order_code
    ),
    last_lookup AS (${lastLookupQuery()}),
    compared AS (
      SELECT p.order_code, p.lines, p.line_no, p.all_origins, p.first_line.expected_status AS expected_status,
             p.first_line.expected_code AS expected_code, p.first_line.invoiced AS invoiced, p.first_line.cod AS cod, o.order_code IS NOT NULL AS tracked, o.account_alias, o.status, o.status_name,
             o.total_service_cost, o.cod_amount AS carrier_cod, l.outcome, l.error_code
      FROM per_order AS p
      LEFT JOIN orders AS o ON o.order_code = p.order_code
      LEFT JOIN last_lookup AS l ON l.order_code = p.order_code
    ),
    known AS (
      SELECT * FROM compared
      WHERE tracked AND coalesce(error_code NOT IN ('${TRACKING_ERROR.ORDERCODE_NOT_FOUND}', '${TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT}'), true)
    ),
    findings AS (
      SELECT 1 AS kind_no, 'bad_partner_line' AS finding, order_code, CAST(NULL AS VARCHAR) AS account_alias, origin AS partner_lines,
             CAST(NULL AS VARCHAR) AS partner_value, CAST(NULL AS VARCHAR) AS carrier_value, CAST(NULL AS ${MONEY}) AS difference, problem AS detail, line_no
      FROM partner WHERE problem IS NOT NULL
      UNION ALL
      SELECT 2, 'unknown_to_carrier', order_code, account_alias, all_origins, NULL, NULL, NULL,
             CASE WHEN error_code IS NOT NULL THEN 'last lookup answered ' || error_code
                  WHEN outcome IS NOT NULL THEN 'no tracking result: last lookup ' || outcome
                  ELSE 'never looked up' END, line_no
      FROM compared
      WHERE NOT tracked OR error_code IN ('${TRACKING_ERROR.ORDERCODE_NOT_FOUND}', '${TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT}')
      UNION ALL
      SELECT 3, 'missing_from_partner', o.order_code, o.account_alias, NULL, NULL, o.status || ' ' || coalesce(o.status_name, ''), NULL,
             'tracked, not in the partner records', NULL
      FROM ${orders} AS o
      WHERE NOT EXISTS (SELECT 1 FROM partner AS p WHERE p.order_code = o.order_code)
      UNION ALL
      SELECT 4, 'duplicate_line', order_code, account_alias, all_origins, NULL, NULL, NULL, lines || ' lines for this order', line_no
      FROM compared WHERE lines > 1
      UNION ALL
      SELECT 5, 'status_mismatch', order_code, account_alias, all_origins, expected_status, status || ' ' || coalesce(status_name, ''), NULL,
             'expected status ' || expected_code || ', carrier shows ' || status, line_no
      FROM known WHERE expected_code IS NOT NULL AND expected_code IS DISTINCT FROM status
      UNION ALL
      SELECT 6, 'invoice_mismatch', order_code, account_alias, all_origins, CAST(invoiced AS VARCHAR), CAST(total_service_cost AS VARCHAR),
             CAST(invoiced - coalesce(total_service_cost, 0) AS ${MONEY}), 'invoiced amount differs from total_service_cost', line_no
      FROM known WHERE invoiced IS NOT NULL AND abs(invoiced - coalesce(total_service_cost, 0)) > ${tolerance}
      UNION ALL
      SELECT 7, 'cod_mismatch', order_code, account_alias, all_origins, CAST(cod AS VARCHAR), CAST(carrier_cod AS VARCHAR),
             CAST(cod - coalesce(carrier_cod, 0) AS ${MONEY}), 'COD amount differs', line_no
      FROM known WHERE cod IS NOT NULL AND abs(cod - coalesce(carrier_cod, 0)) > ${tolerance}
    )
    SELECT finding, order_code, account_alias, partner_lines, partner_value, carrier_value, difference, detail
    FROM findings
    ORDER BY kind_no, line_no NULLS LAST, order_code`;
}

/** The temporary table a reconcile run keeps its findings in: written to a file and counted. */
export const RUN_FINDINGS = 'report_run_findings';

/** The file of a reconcile report: its findings, computed once (the partner records loaded first). */
export function reconcileTables(rules: ReconcileRules, scope: ReportScope): ReportTables {
  return {
    prepare: [temporaryTable(RUN_FINDINGS, reconcileQuery(rules, scope))],
    tables: [{ name: 'reconcile', query: `SELECT * FROM ${RUN_FINDINGS}` }],
  };
}
