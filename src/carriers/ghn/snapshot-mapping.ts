import { carrierInstant, type JsonFields, moneyDecimal } from '../answer-sql.js';
import { GHN_STATUSES } from './reference-data.js';

/**
 * How the loader reads GHN's order detail from the answer log: the envelope's `data`, as the columns
 * the warehouse keeps of an order. Flags and amounts are read as text, since GHN writes them either
 * as JSON values or as text.
 */
export const GHN_DETAIL_ANSWER_FIELDS: JsonFields = {
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
    is_cod_collected: 'VARCHAR',
    is_cod_transferred: 'VARCHAR',
    cod_collect_date: 'VARCHAR',
    cod_transfer_date: 'VARCHAR',
    order_date: 'VARCHAR',
    pickup_time: 'VARCHAR',
    finish_date: 'VARCHAR',
    log: [{ status: 'VARCHAR', updated_date: 'VARCHAR' }],
  },
};

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
 * accountAlias and seenAt): the orders columns 247Express's answers fill, in the same order and types,
 * GHN's where it has them and NULL where it has none. Weights come in grams and are kept in kilograms,
 * as 247Express's; GHN's chargeable weight is the larger of the real and the converted one. The
 * status log is the order's status history; GHN's detail has no handling steps and no fees.
 */
export const GHN_STAGED_SNAPSHOT_COLUMNS = `
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
  CAST(NULL AS DECIMAL(20,4)) AS price,
  CAST(NULL AS DECIMAL(20,4)) AS price_fr,
  CAST(NULL AS DECIMAL(20,4)) AS far_region_fee_amount,
  CAST(NULL AS DECIMAL(20,4)) AS fuel_fee_amount,
  CAST(NULL AS DECIMAL(20,4)) AS vat_amount,
  CAST(NULL AS DECIMAL(20,4)) AS total_service_cost,
  CAST(NULL AS JSON) AS edt_from,
  CAST(NULL AS JSON) AS edt_to,
  CAST(NULL AS JSON) AS sender_id,
  CAST(NULL AS JSON) AS sender_name,
  CAST(NULL AS JSON) AS post_office_accept_id,
  ${moneyDecimal('s.cod_amount')} AS cod_amount,
  CAST(NULL AS JSON) AS estimate_routes,
  CAST(NULL AS JSON) AS confirm_image,
  s.seenAt AS last_seen_at,
  s.runId AS last_run_id,
  s.is_cod_collected = 'true' AS cod_collected,
  ${ghnInstant('s.cod_collect_date')} AS cod_collected_at,
  s.is_cod_transferred = 'true' AS cod_transferred,
  ${ghnInstant('s.cod_transfer_date')} AS cod_transferred_at,
  CAST([] AS STRUCT(serviceID VARCHAR, serviceName VARCHAR, cost VARCHAR)[]) AS price_info,
  list_transform(coalesce(s.log, []), entry -> {
    "time": ${ghnInstant('entry.updated_date')}, status: entry.status, statusName: entry.status,
    trackingName: CAST(NULL AS VARCHAR), provinceName: CAST(NULL AS VARCHAR), postOfficeName: CAST(NULL AS VARCHAR)
  }) AS statuses`;
