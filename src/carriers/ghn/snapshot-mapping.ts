import { carrierInstant, type JsonFields, moneyDecimal } from '../answer-sql.js';
import type { SnapshotMapping } from '../snapshot-mapping.js';
import { GHN_STATUSES } from './reference-data.js';

/** GHN's fees (`/soc`'s `detail`) that add to what the order costs, and the one that takes from it. */
export const GHN_CHARGED_FEES = ['main_service', 'insurance', 'station_do', 'station_pu', 'return', 'r2s'] as const;
export const GHN_DISCOUNT_FEE = 'coupon';

/**
 * The fields of a GHN lookup's answer (tracked-answer.ts) the loader reads: the detail's, and the fee
 * call's, each under its envelope's `data`. Amounts are read as text, since GHN writes them either
 * as JSON numbers or as text.
 */
const GHN_TRACKED_ANSWER_FIELDS: JsonFields = {
  fees: {
    data: {
      detail: Object.fromEntries([...GHN_CHARGED_FEES, GHN_DISCOUNT_FEE].map((fee) => [fee, 'VARCHAR'])),
      payment: [{ value: 'VARCHAR' }],
    },
  },
  detail: {
    data: {
      order_code: 'VARCHAR',
      client_order_code: 'VARCHAR',
      status: 'VARCHAR',
      weight: 'DOUBLE',
      length: 'DOUBLE',
      width: 'DOUBLE',
      height: 'DOUBLE',
      converted_weight: 'DOUBLE',
      service_type_id: 'VARCHAR',
      cod_amount: 'VARCHAR',
      is_cod_collected: 'BOOLEAN',
      cod_collect_date: 'VARCHAR',
      is_cod_transferred: 'BOOLEAN',
      cod_transfer_date: 'VARCHAR',
      order_date: 'VARCHAR',
      pickup_time: 'VARCHAR',
      finish_date: 'VARCHAR',
      log: [{ status: 'VARCHAR', updated_date: 'VARCHAR' }],
    },
  },
};

/**
 * The order's charge lines: each fee GHN charged (not 0), and its coupon as a line taking from the
 * total. Null fees (not asked yet) give none.
 */
const GHN_CHARGE_LINES = `list_filter([
    ${GHN_CHARGED_FEES.map((fee) => `{serviceID: '${fee}', serviceName: '${fee}', cost: s.fees.detail."${fee}"}`).join(',\n    ')},
    {serviceID: '${GHN_DISCOUNT_FEE}', serviceName: '${GHN_DISCOUNT_FEE}', cost: CAST(-${moneyDecimal(`s.fees.detail.${GHN_DISCOUNT_FEE}`)} AS VARCHAR)}
  ], line -> coalesce(${moneyDecimal('line.cost')} <> 0, false))`;

/** A GHN date-time column, NULL where GHN says it is not set (ghn-fields.ts lists how). */
function ghnInstant(text: string): string {
  return `CASE WHEN ${text} IS NULL OR ${text} IN ('', 'null', '0001-01-01T00:00:00Z') THEN NULL ELSE ${carrierInstant(text)} END`;
}

/** GHN's Vietnamese name of a status column, as 247Express's answers carry theirs in trackingName. */
function ghnDisplayName(status: string): string {
  const cases = GHN_STATUSES.map((s) => `WHEN '${s.code}' THEN '${s.displayName.replaceAll("'", "''")}'`).join(' ');
  return `CASE ${status} ${cases} END`;
}

/**
 * Select list over a spool row `s` of GHN's detail (its `data` fields unnested beside runId,
 * accountAlias and seenAt): the columns every carrier's mapping gives (SnapshotMapping), GHN's where
 * it has them and NULL where it has none. Weights come in grams and are kept in kilograms,
 * as 247Express's; GHN's chargeable weight is the larger of the real and the converted one. The
 * status log is the order's status history; GHN's detail has no handling steps. The fee call gives
 * the charges: the main service is the price, the return fee the return charge, what the order's
 * payments add to its total, and each fee a charge line. Its COD facts (collected, transferred to
 * the shop, when) are kept beside the amount.
 */
const GHN_STAGED_SNAPSHOT_COLUMNS = `
  s.order_code AS order_code,
  s.accountAlias AS account_alias,
  nullif(s.client_order_code, '') AS external_code,
  ${ghnInstant('s.pickup_time')} AS accept_date,
  s.status AS status,
  s.status AS status_name,
  ${ghnDisplayName('s.status')} AS tracking_name,
  CAST(NULL AS VARCHAR) AS delay_code,
  CAST(NULL AS VARCHAR) AS delay_note,
  CAST(NULL AS VARCHAR) AS delivery_notes,
  CASE WHEN s.status = 'delivered' THEN ${ghnInstant('s.finish_date')} END AS delivery_date,
  CAST(NULL AS JSON) AS po_delivery_id,
  CAST(NULL AS JSON) AS mail_man,
  CAST(NULL AS VARCHAR) AS receiver_name,
  s.service_type_id AS service_type_id,
  CAST(NULL AS VARCHAR) AS mailer_type_id,
  CAST(NULL AS VARCHAR) AS extra_service_name,
  s.length AS length,
  s.width AS width,
  s.height AS height,
  s.weight / 1000 AS real_weight,
  s.converted_weight / 1000 AS cal_weight,
  greatest(s.weight, s.converted_weight) / 1000 AS weight,
  CAST(NULL AS INTEGER) AS quantity,
  ${moneyDecimal('s.fees.detail.main_service')} AS price,
  ${moneyDecimal('s.fees.detail."return"')} AS price_fr,
  CAST(NULL AS DECIMAL(20,4)) AS far_region_fee_amount,
  CAST(NULL AS DECIMAL(20,4)) AS fuel_fee_amount,
  CAST(NULL AS DECIMAL(20,4)) AS vat_amount,
  CASE WHEN s.fees IS NOT NULL THEN CAST(coalesce(list_sum(list_transform(s.fees.payment, p -> ${moneyDecimal('p.value')})), 0) AS DECIMAL(20,4)) END AS total_service_cost,
  CAST(NULL AS JSON) AS edt_from,
  CAST(NULL AS JSON) AS edt_to,
  CAST(NULL AS JSON) AS sender_id,
  CAST(NULL AS JSON) AS sender_name,
  CAST(NULL AS JSON) AS post_office_accept_id,
  ${moneyDecimal('s.cod_amount')} AS cod_amount,
  s.is_cod_collected AS cod_collected,
  ${ghnInstant('s.cod_collect_date')} AS cod_collected_at,
  s.is_cod_transferred AS cod_transferred,
  ${ghnInstant('s.cod_transfer_date')} AS cod_transferred_at,
  CAST(NULL AS JSON) AS estimate_routes,
  CAST(NULL AS JSON) AS confirm_image,
  s.seenAt AS last_seen_at,
  s.runId AS last_run_id,
  CASE WHEN s.fees IS NULL THEN CAST([] AS STRUCT(serviceID VARCHAR, serviceName VARCHAR, cost VARCHAR)[]) ELSE ${GHN_CHARGE_LINES} END AS price_info,
  list_transform(coalesce(s.log, []), entry -> {
    "time": ${ghnInstant('entry.updated_date')}, status: entry.status, statusName: entry.status,
    trackingName: CAST(NULL AS VARCHAR), provinceName: CAST(NULL AS VARCHAR), postOfficeName: CAST(NULL AS VARCHAR)
  }) AS statuses,
  CAST([] AS STRUCT(statusID VARCHAR, statusName VARCHAR, postOfficeID VARCHAR, postOfficeName VARCHAR,
    provinceID VARCHAR, provinceName VARCHAR, dateChange TIMESTAMPTZ, notes VARCHAR)[]) AS trackings`;

/** How the loader reads a GHN lookup's answer: the fields of its detail's `data`, beside its fees' `data`. */
export const GHN_SNAPSHOT_MAPPING: SnapshotMapping = {
  answerFields: GHN_TRACKED_ANSWER_FIELDS,
  answerColumns: 'unnest(answer.detail.data), answer.fees.data AS fees',
  stagedColumns: GHN_STAGED_SNAPSHOT_COLUMNS,
};
