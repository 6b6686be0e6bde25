import { z } from 'zod';
import { unknownOrderErrorCodes } from '../carriers/carrier-definition-sql.js';
import { sameOrder } from '../warehouse/order-keys.js';
import { sqlText } from '../warehouse/sql-literals.js';
import { PARTNER_RECORDS } from './partner-records.js';
import {
  codeRangeCondition,
  ORDER_COLUMNS,
  type ReportScope,
  type ReportTables,
  scopeCondition,
  temporaryTable,
} from './report-sql.js';

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

/** Per order the partner lists, its first readable line's `amount` (a column of partnerLinesQuery), named `as`. */
function firstReadableAmount(amount: 'invoiced' | 'cod', as: string): string {
  return `
    (SELECT order_code, ${amount} AS ${as} FROM (${partnerLinesQuery()})
     WHERE problem IS NULL AND ${amount} IS NOT NULL
     QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY line_no) = 1)`;
}

/** Per order the partner lists, its first readable line's invoiced amount: what `charges --invoices` compares. */
export function partnerInvoicesQuery(): string {
  return firstReadableAmount('invoiced', 'invoiced_amount');
}

/** Per order the partner lists, its first readable line's COD amount: what `report cod --partner` compares. */
export function partnerCodQuery(): string {
  return firstReadableAmount('cod', 'expected_cod');
}

/** Each order code's latest lookup result. */
function lastLookupQuery(): string {
  return `
      SELECT carrier, order_code, account_alias, outcome, error_code, finished_at FROM lookup_results
      QUALIFY row_number() OVER (PARTITION BY carrier, order_code ORDER BY finished_at DESC, run_id DESC) = 1`;
}

/** The error codes of a last lookup that mean the carrier does not know the order for this account (the carriers' codes are distinct). */
const UNKNOWN_ERRORS = unknownOrderErrorCodes();

/**
 * What the warehouse knows of each order code, the side reconcile compares the partner's records
 * with: tracked or not, status, total and COD, and the latest lookup's outcome and error code.
 */
export function carrierRecordsQuery(): string {
  return `
    WITH last_lookup AS (${lastLookupQuery()})
    SELECT coalesce(o.carrier, l.carrier) AS carrier, coalesce(o.order_code, l.order_code) AS order_code,
           coalesce(o.account_alias, l.account_alias) AS account_alias,
           o.order_code IS NOT NULL AS tracked, o.status, o.status_name, o.total_service_cost, o.cod_amount, o.accept_date, o.order_date,
           l.outcome AS last_lookup_outcome, l.error_code AS last_lookup_error, l.finished_at AS last_lookup_at,
           o.order_code IS NULL OR coalesce(l.error_code IN ${UNKNOWN_ERRORS}, false) AS unknown_to_carrier
    FROM orders AS o FULL OUTER JOIN last_lookup AS l ON ${sameOrder('l', 'o')}`;
}

/**
 * A part of the order codes: from `from` (inclusive) up to `until` (exclusive), either open. A part
 * without `from` also holds the partner's lines without an order code.
 */
export interface CodePart {
  readonly from?: string | undefined;
  readonly until?: string | undefined;
}

/** The condition keeping the rows whose `column` lies in the part (`true` for the whole range). */
function partCondition(part: CodePart, column: string, withoutCode = false): string {
  const conditions = [
    ...(part.from === undefined ? [] : [`${column} >= ${sqlText(part.from)}`]),
    ...(part.until === undefined ? [] : [`${column} < ${sqlText(part.until)}`]),
  ];
  if (conditions.length === 0) return 'true';
  const inPart = conditions.join(' AND ');
  return withoutCode && part.from === undefined ? `(${column} IS NULL OR ${inPart})` : inPart;
}

/**
 * One row per finding of the order codes in `part`: kind_no and line_no (the report's order), finding,
 * order_code, account_alias, partner_lines (where in the partner's records), partner_value,
 * carrier_value, difference (money findings: partner minus carrier) and detail. `codes`, when given,
 * spans the order codes of the partner's lines and of the scope's orders: the warehouse's rows
 * outside it are not read. Every finding is about one order code, so the parts' findings together
 * are those of the whole range.
 */
export function reconcileQuery(
  rules: ReconcileRules,
  scope: ReportScope = {},
  codes?: ReportScope['codes'],
  part: CodePart = {},
): string {
  const tolerance = rules.moneyTolerance;
  const inCodes = `${codeRangeCondition({ codes })} AND ${partCondition(part, 'order_code')}`;
  const known = `tracked AND coalesce(error_code NOT IN ${UNKNOWN_ERRORS}, true)`;
  const statusDiffers = 'expected_code IS NOT NULL AND expected_code IS DISTINCT FROM status';
  const invoiceDiffers = `invoiced IS NOT NULL AND abs(invoiced - coalesce(total_service_cost, 0)) > ${tolerance}`;
  const codDiffers = `cod IS NOT NULL AND abs(cod - coalesce(carrier_cod, 0)) > ${tolerance}`;
  return `
    WITH partner AS (
      SELECT line_no, order_code, expected_status, expected_code, invoiced, cod, problem FROM (${partnerLinesQuery()})
      WHERE ${partCondition(part, 'order_code', true)}
    ),
    -- The order codes on several lines: how many of them are readable, the first readable one and the first.
    several AS (
      SELECT order_code, count(*) FILTER (WHERE problem IS NULL) AS lines,
             coalesce(min(line_no) FILTER (WHERE problem IS NULL), min(line_no)) AS line_no
      FROM partner WHERE order_code IS NOT NULL GROUP BY order_code HAVING count(*) > 1
    ),
    -- One line per order code the partner lists: its first readable line, which is compared (or its first, lines 0).
    per_order AS (
      SELECT p.order_code, coalesce(s.lines, CASE WHEN p.problem IS NULL THEN 1 ELSE 0 END) AS lines, p.line_no,
             p.expected_status, p.expected_code, p.invoiced, p.cod
      FROM partner AS p LEFT JOIN several AS s ON s.order_code = p.order_code
      WHERE p.order_code IS NOT NULL AND (s.order_code IS NULL OR p.line_no = s.line_no)
    ),
    last_lookup AS (
      SELECT order_code, outcome, error_code FROM lookup_results
      WHERE ${inCodes} AND order_code IN (SELECT order_code FROM partner)
      QUALIFY row_number() OVER (PARTITION BY order_code ORDER BY finished_at DESC, run_id DESC) = 1
    ),
    -- Each order the partner lists or the warehouse tracks in the scope, kept when it has a finding.
    compared AS (
      SELECT * FROM (
        SELECT o.carrier, coalesce(p.order_code, o.order_code) AS order_code, p.order_code IS NOT NULL AS listed, p.lines, p.line_no,
               p.expected_status, p.expected_code, p.invoiced, p.cod,
               o.order_code IS NOT NULL AS tracked, o.account_alias, o.accept_date, o.order_date, o.status, o.status_name,
               o.total_service_cost, o.cod_amount AS carrier_cod, l.outcome, l.error_code
        FROM (SELECT carrier, order_code, account_alias, accept_date, order_date, status, status_name, total_service_cost, cod_amount
              FROM orders WHERE ${inCodes}) AS o
        FULL OUTER JOIN per_order AS p ON p.order_code = o.order_code
        LEFT JOIN last_lookup AS l ON l.order_code = p.order_code
      )
      WHERE CASE WHEN NOT listed THEN ${scopeCondition(scope, ORDER_COLUMNS)}
                 ELSE lines > 0 AND (NOT tracked OR error_code IN ${UNKNOWN_ERRORS} OR lines > 1
                      OR (${statusDiffers}) OR (${invoiceDiffers}) OR (${codDiffers})) END
    ),
    -- Where the lines of the compared orders are, named by the lines' origins: the readable ones, in order.
    origins AS (
      SELECT p.order_code, array_to_string(list(r.origin ORDER BY p.line_no), ', ') AS all_origins
      FROM partner AS p JOIN ${PARTNER_RECORDS} AS r ON r.line_no = p.line_no
      WHERE p.problem IS NULL AND p.order_code IN (SELECT order_code FROM compared WHERE listed)
      GROUP BY p.order_code
    ),
    partner_compared AS (
      SELECT c.*, r.all_origins FROM compared AS c JOIN origins AS r ON r.order_code = c.order_code
    ),
    findings AS (
      SELECT 1 AS kind_no, 'bad_partner_line' AS finding, CAST(NULL AS VARCHAR) AS carrier, p.order_code, CAST(NULL AS VARCHAR) AS account_alias, r.origin AS partner_lines,
             CAST(NULL AS VARCHAR) AS partner_value, CAST(NULL AS VARCHAR) AS carrier_value, CAST(NULL AS ${MONEY}) AS difference, p.problem AS detail, p.line_no
      FROM partner AS p JOIN ${PARTNER_RECORDS} AS r ON r.line_no = p.line_no WHERE p.problem IS NOT NULL
      UNION ALL
      SELECT 2, 'unknown_to_carrier', carrier, order_code, account_alias, all_origins, NULL, NULL, NULL,
             CASE WHEN error_code IS NOT NULL THEN 'last lookup answered ' || error_code
                  WHEN outcome IS NOT NULL THEN 'no tracking result: last lookup ' || outcome
                  ELSE 'never looked up' END, line_no
      FROM partner_compared
      WHERE NOT tracked OR error_code IN ${UNKNOWN_ERRORS}
      UNION ALL
      SELECT 3, 'missing_from_partner', carrier, order_code, account_alias, NULL, NULL, status || ' ' || coalesce(status_name, ''), NULL,
             'tracked, not in the partner records', NULL
      FROM compared WHERE NOT listed
      UNION ALL
      SELECT 4, 'duplicate_line', carrier, order_code, account_alias, all_origins, NULL, NULL, NULL, lines || ' lines for this order', line_no
      FROM partner_compared WHERE lines > 1
      UNION ALL
      SELECT 5, 'status_mismatch', carrier, order_code, account_alias, all_origins, expected_status, status || ' ' || coalesce(status_name, ''), NULL,
             'expected status ' || expected_code || ', carrier shows ' || status, line_no
      FROM partner_compared WHERE ${known} AND ${statusDiffers}
      UNION ALL
      SELECT 6, 'invoice_mismatch', carrier, order_code, account_alias, all_origins, CAST(invoiced AS VARCHAR), CAST(total_service_cost AS VARCHAR),
             CAST(invoiced - coalesce(total_service_cost, 0) AS ${MONEY}), 'invoiced amount differs from total_service_cost', line_no
      FROM partner_compared WHERE ${known} AND ${invoiceDiffers}
      UNION ALL
      SELECT 7, 'cod_mismatch', carrier, order_code, account_alias, all_origins, CAST(cod AS VARCHAR), CAST(carrier_cod AS VARCHAR),
             CAST(cod - coalesce(carrier_cod, 0) AS ${MONEY}), 'COD amount differs', line_no
      FROM partner_compared WHERE ${known} AND ${codDiffers}
    )
    SELECT kind_no, line_no, finding, carrier, order_code, account_alias, partner_lines, partner_value, carrier_value, difference, detail
    FROM findings`;
}

/** The temporary table a reconcile run keeps its findings in: written to a file and counted. */
export const RUN_FINDINGS = 'report_run_findings';

/**
 * The file of a reconcile report: its findings, computed once (the partner records loaded first), a
 * part of the order codes after another when `boundaries` split them, so that DuckDB joins one part's
 * orders and lines at a time instead of holding (and spilling) every order's.
 */
export function reconcileTables(
  rules: ReconcileRules,
  scope: ReportScope,
  codes?: ReportScope['codes'],
  boundaries: readonly string[] = [],
): ReportTables {
  const parts = [undefined, ...boundaries].map((from, i) => ({ from, until: boundaries[i] }));
  const [first, ...others] = parts.map((part) => reconcileQuery(rules, scope, codes, part));
  return {
    prepare: [temporaryTable(RUN_FINDINGS, first!), ...others.map((query) => `INSERT INTO ${RUN_FINDINGS} ${query}`)],
    tables: [
      {
        name: 'reconcile',
        query: `SELECT carrier, finding, order_code, account_alias, partner_lines, partner_value, carrier_value, difference, detail
                FROM ${RUN_FINDINGS} ORDER BY kind_no, line_no NULLS LAST, order_code`,
      },
    ],
  };
}
