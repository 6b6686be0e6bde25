import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { chargeAuditInsert } from '../../src/warehouse/charge-audit-rows.js';
import { sqlText } from '../../src/warehouse/sql-literals.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';

/** The carrier of every synthetic order. */
const CARRIER = sqlText(DEFAULT_CARRIER_ID);

/** Orders whose audit rows one statement computes: a bound on the memory of the build. */
const AUDIT_CHUNK = 2_000_000;

/** The orders' audit rows, as the loaders write them, computed by the same SQL a chunk of codes at a time. */
function chargeAuditStatements(orders: number): string[] {
  const code = (i: number) => `'EX${String(i).padStart(9, '0')}'`;
  const statements: string[] = [];
  for (let first = 1; first <= orders; first += AUDIT_CHUNK) {
    const codes = `order_code BETWEEN ${code(first)} AND ${code(Math.min(orders, first + AUDIT_CHUNK - 1))}`;
    statements.push(chargeAuditInsert(`(SELECT * FROM orders WHERE ${codes})`, codes));
  }
  return statements;
}

/** Past nightly runs' `lookup_results`: `nights` runs, one a day up to `lastNight`, each looking up `perNight` stored orders in turn. */
export interface LookupHistory {
  readonly nights: number;
  readonly perNight: number;
  /** The carrier day of the last night, `YYYY-MM-DD`. */
  readonly lastNight: string;
}

export interface SyntheticOptions {
  /**
   * Days of history ending 2026-11-29: order i accepted at its share of the span, so codes and accept
   * dates rise together, as the carrier assigns them, and orders older than two weeks have finished.
   * Without it, orders scatter over 60 days from 2026-10-01.
   */
  readonly historyDays?: number;
  /** Adds the history of past runs (their `runs` rows and `lookup_results`), as a warehouse kept for a long time holds. */
  readonly lookupHistory?: LookupHistory;
  /** Adds 247Express's payout statements of the delivered COD orders (payoutStatements says which). */
  readonly payouts?: boolean;
}

/** The end (exclusive) of a `historyDays` span. */
const HISTORY_END = "TIMESTAMPTZ '2026-11-30 00:00:00+07'";

/**
 * The synthetic warehouse, all in SQL, its orders spread over 60 days from 2026-10-01 (or `historyDays`): order i's charges follow the published relations unless
 * i % 100 = 0; five statuses each, failed attempts on a third of the orders, quotes for half, a run
 * and quota ledger rows per day, every order's charge audit row; with `partnerCsv`, a partner CSV of
 * every order there.
 */
export async function buildSyntheticWarehouse(
  path: string,
  orders: number,
  partnerCsv?: string,
  options: SyntheticOptions = {},
): Promise<void> {
  const acceptDate =
    options.historyDays === undefined
      ? "TIMESTAMPTZ '2026-10-01 00:00:00+07' + to_seconds((i * 86413) % (60 * 86400))"
      : `${HISTORY_END} - to_days(${options.historyDays}) + to_seconds(CAST((i - 1) * ${options.historyDays * 86400} // ${orders} AS BIGINT))`;
  // In a history, orders accepted more than two weeks before its end have finished: none still awaits handling or delivery.
  const recent = options.historyDays === undefined ? 'true' : `${acceptDate} >= ${HISTORY_END} - INTERVAL 14 DAY`;
  // A history keeps each order's rows together in code order, as nightly loads of rising codes leave them.
  const inOrder = (keys: string) => (options.historyDays === undefined ? '' : ` ORDER BY ${keys}`);
  const warehouse = await Warehouse.open(path, { memoryLimit: '4GB' });
  try {
    const statements = [
      `CREATE TEMP TABLE synthetic AS
       SELECT i, ${CARRIER} AS carrier, 'EX' || lpad(CAST(i AS VARCHAR), 9, '0') AS order_code, 'shop-' || (i % 5) AS account_alias,
              ${acceptDate} AS accept_date,
              CASE WHEN i % 37 = 0 THEN '18' WHEN i % 11 = 0 THEN '28' WHEN ${recent} AND i % 10 = 3 THEN '16' WHEN ${recent} AND i % 10 = 4 THEN '25' ELSE '30' END AS status,
              10 + i % 50 AS length, 10 + i % 40 AS width, 5 + i % 30 AS height, (i % 300) / 10 + 0.1 AS real_weight,
              CAST(30000 + (i % 50) * 1000 AS DECIMAL(20,4)) AS main, i % 7 = 0 AS far, i % 11 = 0 AS returned
       FROM generate_series(1, ${orders}) AS t(i)`,
      `INSERT INTO orders (carrier, order_code, account_alias, accept_date, order_date, status, status_name, delay_code, delay_note, length, width, height, real_weight, cal_weight, weight,
         price, price_fr, far_region_fee_amount, fuel_fee_amount, vat_amount, total_service_cost, cod_amount, is_terminal, first_seen_at, last_seen_at, last_run_id)
       SELECT carrier, order_code, account_alias, accept_date, accept_date, status, 'STATUS' || status,
              CASE WHEN status = '16' THEN lpad(CAST(1 + i % 40 AS VARCHAR), 2, '0') END, CASE WHEN status = '16' THEN 'Người nhận hẹn lại' END,
              length, width, height, real_weight, round(length * width * height / 6000, 2), greatest(real_weight, round(length * width * height / 6000, 2)),
              main, fr, far_fee, fuel, vat, main + fr + far_fee + fuel + vat + CASE WHEN i % 100 = 0 THEN 1000 ELSE 0 END, (i % 4) * 50000,
              status IN ('18', '28', '30'), accept_date, accept_date + INTERVAL 3 DAY, 'bench'
       FROM (SELECT *, CASE WHEN far THEN main * 0.2 ELSE 0 END AS far_fee, CASE WHEN returned THEN main * 0.5 ELSE 0 END AS fr, main * 0.2 AS fuel,
                    (main + CASE WHEN far THEN main * 0.2 ELSE 0 END + CASE WHEN returned THEN main * 0.5 ELSE 0 END + main * 0.2) * 0.1 AS vat
             FROM synthetic)`,
      `INSERT INTO order_charges
       SELECT carrier, order_code, row_number() OVER (PARTITION BY carrier, order_code ORDER BY k), service_id, service_name, cost FROM (
         SELECT carrier, order_code, 1 AS k, 'DE' AS service_id, 'Chuyển phát nhanh' AS service_name, price AS cost FROM orders
         UNION ALL SELECT carrier, order_code, 2, 'VSVX', 'Phụ phí vùng sâu vùng xa', far_region_fee_amount FROM orders WHERE far_region_fee_amount > 0
         UNION ALL SELECT carrier, order_code, 3, 'CH', 'Cước chuyển hoàn', price_fr FROM orders WHERE price_fr > 0
         UNION ALL SELECT carrier, order_code, 4, 'Fuel', 'Phụ phí xăng dầu', fuel_fee_amount FROM orders
         UNION ALL SELECT carrier, order_code, 5, 'VAT', 'Thuế VAT', vat_amount FROM orders)${inOrder('2, 3')}`,
      `INSERT INTO order_statuses
       SELECT carrier, order_code, k, accept_date + to_hours(k * 6), CASE k WHEN 1 THEN '21' WHEN 2 THEN '23' WHEN 3 THEN '24' WHEN 4 THEN '25'
              ELSE CASE WHEN status = '28' THEN '27' ELSE status END END, NULL, NULL, 'Hà Nội', 'Bưu cục ' || (i % 300)
       FROM synthetic, range(1, 6) AS r(k)${inOrder('i, k')}`,
      `INSERT INTO delivery_failures
       SELECT carrier, order_code, accept_date + to_hours(20 + a * 24), lpad(CAST(1 + (i + a) % 40 AS VARCHAR), 2, '0'), 'Người nhận hẹn lại',
              'Tỉnh ' || (i % 63), 'Bưu cục ' || (i % 300), accept_date + to_hours(21 + a * 24), 'tracking', 'bench', NULL
       FROM synthetic, range(0, 2) AS r(a)
       WHERE i % 3 = 0 AND (a = 0 OR i % 9 = 0)${inOrder('i, a')}`,
      `INSERT INTO price_quotes (carrier, quote_id, run_id, order_code, account_alias, to_province_name, to_district_name, to_ward_name, length, width, height,
         real_weight, client_hub_id, service_type_id, ok, total_service_cost, quoted_at)
       SELECT carrier, 'Q' || order_code, 'bench', order_code, account_alias, 'Hà Nội', 'Ba Đình', 'Phúc Xá', length, width, height, real_weight, 'HUB', 'DE', true,
              total_service_cost - price_fr * 1.1, accept_date
       FROM orders WHERE right(order_code, 1) IN ('0', '2', '4', '6', '8')`,
      `INSERT INTO order_changes
       SELECT carrier, order_code, 'total_service_cost', CAST(total_service_cost - 5000 AS VARCHAR), CAST(total_service_cost AS VARCHAR), accept_date + INTERVAL 4 DAY, 'bench'
       FROM orders WHERE status = '30' AND right(order_code, 3) = '777'`,
      // Nightly runs and their quota ledger: one run a day, each key's lookups that day.
      `INSERT INTO runs (run_id, job, source, started_at, finished_at, carrier_day, codes_read, codes_rejected, codes_duplicate, codes_to_look_up,
         looked_up_ok, carrier_errors, transport_errors, deferred, lookups_spent, exit_code, exit_state)
       SELECT 'bench-' || strftime(day, '%Y%m%d'), 'track', 'csv', day + INTERVAL 2 HOUR - INTERVAL 7 HOUR, day + INTERVAL 2 HOUR - INTERVAL 7 HOUR + to_seconds(60 + n % 600),
              CAST(day AS DATE), n, 0, 0, n, n - n / 1000, n / 1000, 0, 0, n, 0, 'ok'
       FROM (SELECT CAST(accept_date AS DATE) AS day, count(*) AS n FROM synthetic GROUP BY ALL)`,
      `INSERT INTO quota_usage
       SELECT carrier, CAST(accept_date AS DATE), account_alias, count(*), max(accept_date) FROM synthetic GROUP BY ALL
       UNION ALL SELECT carrier, CAST(accept_date AS DATE), '*', count(*), max(accept_date) FROM synthetic GROUP BY ALL`,
      ...(partnerCsv === undefined
        ? []
        : [
            `COPY (SELECT order_code, status AS expected_status,
                    CASE WHEN right(order_code, 2) = '13' THEN total_service_cost + 5000 ELSE total_service_cost END AS invoiced_amount, cod_amount
             FROM orders WHERE right(order_code, 2) <> '99') TO '${partnerCsv.replaceAll("'", "''")}' (FORMAT csv, HEADER)`,
          ]),
      ...(options.lookupHistory === undefined || orders === 0
        ? []
        : lookupHistoryStatements(options.lookupHistory, orders)),
      ...(options.payouts === true ? payoutStatements() : []),
      ...chargeAuditStatements(orders),
      'DROP TABLE synthetic',
      'CHECKPOINT',
    ];
    for (const statement of statements) await warehouse.run(statement);
  } finally {
    await warehouse.close();
  }
}

/** The past runs and their lookups: night n looks up the next `perNight` orders after night n - 1's, wrapping around. */
function lookupHistoryStatements(history: LookupHistory, orders: number): string[] {
  const nights = `SELECT n, DATE '${history.lastNight}' - CAST(${history.nights - 1} - n AS INTEGER) AS day FROM range(0, ${history.nights}) AS t(n)`;
  return [
    `INSERT INTO runs (run_id, job, source, started_at, finished_at, carrier_day, codes_read, codes_rejected, codes_duplicate, codes_to_look_up,
       looked_up_ok, carrier_errors, transport_errors, deferred, lookups_spent, exit_code, exit_state)
     SELECT 'history-' || strftime(day, '%Y%m%d'), 'nightly', 'csv', day + INTERVAL 2 HOUR - INTERVAL 7 HOUR, day + INTERVAL 3 HOUR - INTERVAL 7 HOUR,
            day, ${history.perNight}, 0, 0, ${history.perNight}, ${history.perNight}, 0, 0, 0, ${history.perNight}, 0, 'ok'
     FROM (${nights})`,
    `INSERT INTO lookup_results
     SELECT ${CARRIER}, 'history-' || strftime(day, '%Y%m%d'), 'EX' || lpad(CAST(1 + (n * ${history.perNight} + k) % ${orders} AS VARCHAR), 9, '0'),
            'shop-' || ((1 + (n * ${history.perNight} + k) % ${orders}) % 5), CASE WHEN k % 500 = 0 THEN 'carrier_error' ELSE 'ok' END,
            CASE WHEN k % 500 = 0 THEN 'ORDER_NOT_FOUND' END, CASE WHEN k % 500 = 0 THEN 'Không tìm thấy vận đơn' END, 1,
            'nightly.csv:' || (k + 2), CAST(day AS TIMESTAMPTZ) + INTERVAL 2 HOUR - INTERVAL 7 HOUR + to_milliseconds(k * 20)
     FROM (${nights}), range(0, ${history.perNight}) AS r(k)`,
  ];
}

/**
 * A statement line of each delivered COD order, in a batch of the carrier day five days after its
 * acceptance, its fees the order's billed total: but one order in 50 in no statement, one line in 97
 * paying 1,000 dong short, one in 89 withholding 2,000 dong more, one in 113 paid again in the next
 * batch, and one returned order in 22 paid COD. A batch's stated total is its lines' net paid, one
 * batch in 7 stating 5,000 more.
 */
function payoutStatements(): string[] {
  const batchDay = "strftime(s.accept_date + INTERVAL 5 DAY, '%Y%m%d')";
  return [
    `CREATE TEMP TABLE synthetic_lines AS
     SELECT 'P' || ${batchDay} AS batch_id, CAST(s.accept_date + INTERVAL 5 DAY AS DATE) AS batch_date, s.order_code,
            CAST(o.cod_amount AS BIGINT) AS cod_collected,
            CAST(round(o.total_service_cost) AS BIGINT) + CASE WHEN i % 89 = 0 THEN 2000 ELSE 0 END AS fees_withheld,
            CASE WHEN i % 97 = 0 THEN -1000 ELSE 0 END AS short
     FROM synthetic AS s JOIN orders AS o ON o.carrier = s.carrier AND o.order_code = s.order_code
     WHERE o.cod_amount > 0 AND i % 50 <> 1 AND (s.status = '30' OR (s.status = '28' AND i % 22 = 0))
     UNION ALL
     SELECT 'P' || strftime(s.accept_date + INTERVAL 6 DAY, '%Y%m%d'), CAST(s.accept_date + INTERVAL 6 DAY AS DATE), s.order_code,
            CAST(o.cod_amount AS BIGINT), 0, 0
     FROM synthetic AS s JOIN orders AS o ON o.carrier = s.carrier AND o.order_code = s.order_code
     WHERE o.cod_amount > 0 AND s.status = '30' AND i % 113 = 0 AND i % 50 <> 1`,
    `INSERT INTO payout_lines
     SELECT ${CARRIER}, batch_id, order_code, 'cod', batch_date,
            sum(cod_collected - fees_withheld + short) OVER (PARTITION BY batch_id) + CASE WHEN hash(batch_id) % 7 = 0 THEN 5000 ELSE 0 END,
            cod_collected, fees_withheld, 0, cod_collected - fees_withheld + short, 'bench.csv', 'bench', TIMESTAMPTZ '2026-12-01 00:00:00+07'
     FROM synthetic_lines ORDER BY batch_id, order_code`,
    `INSERT INTO payout_line_fees
     SELECT ${CARRIER}, batch_id, order_code, 'cod', 'shipping', fees_withheld FROM synthetic_lines WHERE fees_withheld <> 0
     ORDER BY batch_id, order_code`,
    'DROP TABLE synthetic_lines',
  ];
}
