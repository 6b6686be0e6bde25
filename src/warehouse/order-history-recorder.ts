import { moneyDecimal } from '../carriers/answer-sql.js';
import { failedAttemptStatusIn } from '../carriers/carrier-definition-sql.js';
import { ofOrdersIn, sameOrder } from './order-keys.js';
import type { SqlRunner } from './warehouse.js';

/** Source of the delivery_failures rows taken from tracking snapshots (the callback receiver writes 'callback'). */
export const FAILURE_SOURCE_TRACKING = 'tracking';

/**
 * The `orders` columns whose changes `order_changes` keeps, as text: status, the charges, the
 * weights and dimensions, the delay code and note. Money keeps its DECIMAL(20,4) text (`236960.0000`).
 */
const TRACKED_COLUMNS: readonly { readonly column: string; readonly money?: true }[] = [
  { column: 'status' },
  { column: 'price', money: true },
  { column: 'price_fr', money: true },
  { column: 'far_region_fee_amount', money: true },
  { column: 'fuel_fee_amount', money: true },
  { column: 'vat_amount', money: true },
  { column: 'total_service_cost', money: true },
  { column: 'cod_amount', money: true },
  { column: 'length' },
  { column: 'width' },
  { column: 'height' },
  { column: 'real_weight' },
  { column: 'cal_weight' },
  { column: 'weight' },
  { column: 'delay_code' },
  { column: 'delay_note' },
];

function asText(relation: string, column: string, money: boolean): string {
  return money
    ? `CAST(CAST(${relation}.${column} AS DECIMAL(20,4)) AS VARCHAR)`
    : `CAST(${relation}.${column} AS VARCHAR)`;
}

/**
 * Writes one `order_changes` row per field in which a staged snapshot differs from the stored order
 * (before the stored order is replaced): the tracked columns, and each priceInfo line's cost by
 * service ID (`price_info.<serviceID>`; a line that appears or disappears has a null side). An order
 * seen for the first time has nothing to differ from. Loading the same snapshot again adds nothing.
 * `stored` holds the stored rows of the staged orders. The stored tables are read through the
 * staged codes (`IN (SELECT order_code ...)`), so their scans skip the rows of other orders.
 */
export async function recordOrderChanges(sql: SqlRunner, staged: string, stored: string): Promise<void> {
  const fields = TRACKED_COLUMNS.map(
    ({ column, money }) =>
      `{field: '${column}', old_value: ${asText('stored', column, money ?? false)}, new_value: ${asText('s', column, money ?? false)}}`,
  );
  await sql.run(
    `INSERT INTO order_changes
     SELECT carrier, order_code, change.field, change.old_value, change.new_value, seen_at, run_id
     FROM (
       SELECT s.carrier, s.order_code, s.last_seen_at AS seen_at, s.last_run_id AS run_id, unnest([${fields.join(', ')}]) AS change
       FROM ${staged} AS s JOIN ${stored} AS stored ON ${sameOrder('stored', 's')}
     )
     WHERE change.old_value IS DISTINCT FROM change.new_value
     ON CONFLICT DO NOTHING`,
  );
  await sql.run(
    `INSERT INTO order_changes
     WITH seen AS (
       SELECT s.carrier, s.order_code, s.last_seen_at AS seen_at, s.last_run_id AS run_id, s.price_info
       FROM ${staged} AS s WHERE EXISTS (SELECT 1 FROM ${stored} AS stored WHERE ${sameOrder('stored', 's')})
     ),
     new_lines AS (
       SELECT carrier, order_code, service_id, CAST(sum(${moneyDecimal('cost_text')}) AS DECIMAL(20,4)) AS cost
       FROM (SELECT carrier, order_code, coalesce(line.serviceID, '') AS service_id, line.cost AS cost_text FROM (SELECT carrier, order_code, unnest(price_info) AS line FROM seen))
       GROUP BY ALL
     ),
     old_lines AS (
       SELECT carrier, order_code, coalesce(service_id, '') AS service_id, CAST(sum(cost) AS DECIMAL(20,4)) AS cost
       FROM order_charges WHERE ${ofOrdersIn('seen')}
       GROUP BY ALL
     )
     SELECT seen.carrier, seen.order_code, 'price_info.' || lines.service_id, CAST(lines.old_cost AS VARCHAR), CAST(lines.new_cost AS VARCHAR), seen.seen_at, seen.run_id
     FROM (
       SELECT coalesce(n.carrier, o.carrier) AS carrier, coalesce(n.order_code, o.order_code) AS order_code,
              coalesce(n.service_id, o.service_id) AS service_id, o.cost AS old_cost, n.cost AS new_cost
       FROM new_lines AS n FULL OUTER JOIN old_lines AS o ON ${sameOrder('o', 'n')} AND o.service_id = n.service_id
     ) AS lines
     JOIN seen ON ${sameOrder('seen', 'lines')}
     WHERE lines.old_cost IS DISTINCT FROM lines.new_cost
     ON CONFLICT DO NOTHING`,
  );
}

/**
 * Writes one `delivery_failures` row per failed delivery attempt a staged snapshot shows: each
 * status-16 change of its statuses, identified by (order, time of that change in whole seconds).
 * The snapshot's delayCode and delayNote belong to its latest status-16 change only (the carrier
 * keeps no earlier reasons, and none once the order is delivered); an attempt seen without its reason
 * gets a null delay_code, filled in if a later snapshot of the same attempt brings it (a callback does not fill it).
 * A row already there is otherwise left as it is (first observation, its source and run).
 * The stored failures are read through the staged codes, so the scan skips the rows of other orders.
 */
export async function recordDeliveryFailures(sql: SqlRunner, staged: string): Promise<void> {
  await sql.run(
    `INSERT INTO delivery_failures (carrier, order_code, attempted_at, delay_code, delay_note, province_name, post_office_name, observed_at, source, run_id, callback_event_id)
     WITH attempts AS (
       SELECT carrier, order_code, attempted_at, province_name, post_office_name, last_seen_at, last_run_id,
              CASE WHEN latest THEN delay_code END AS delay_code, CASE WHEN latest THEN delay_note END AS delay_note
       FROM (
         SELECT *, row_number() OVER (PARTITION BY carrier, order_code ORDER BY attempted_at DESC) = 1 AS latest
         FROM (
           SELECT carrier, order_code, date_trunc('second', entry."time") AS attempted_at, entry.provinceName AS province_name,
                  entry.postOfficeName AS post_office_name, delay_code, delay_note, last_seen_at, last_run_id
           FROM (SELECT carrier, order_code, delay_code, delay_note, last_seen_at, last_run_id, unnest(statuses) AS entry FROM ${staged})
           WHERE ${failedAttemptStatusIn('entry.status')} AND entry."time" IS NOT NULL
         )
         QUALIFY row_number() OVER (PARTITION BY carrier, order_code, attempted_at ORDER BY attempted_at) = 1
       )
     )
     SELECT carrier, order_code, attempted_at, delay_code, delay_note, province_name, post_office_name, last_seen_at, '${FAILURE_SOURCE_TRACKING}', last_run_id, NULL
     FROM attempts AS a
     WHERE NOT EXISTS (
       SELECT 1 FROM delivery_failures AS f
       WHERE f.order_code IN (SELECT order_code FROM ${staged}) AND ${sameOrder('f', 'a')} AND f.attempted_at = a.attempted_at AND (f.delay_code IS NOT NULL OR a.delay_code IS NULL)
     )
     ON CONFLICT (carrier, order_code, attempted_at) DO UPDATE SET
       delay_code = coalesce(delivery_failures.delay_code, excluded.delay_code),
       delay_note = coalesce(delivery_failures.delay_note, excluded.delay_note),
       province_name = coalesce(delivery_failures.province_name, excluded.province_name),
       post_office_name = coalesce(delivery_failures.post_office_name, excluded.post_office_name)`,
  );
}
