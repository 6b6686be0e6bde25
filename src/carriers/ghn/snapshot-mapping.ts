import { carrierInstant, type JsonFields, moneyDecimal } from '../answer-sql.js';
import type { SnapshotMapping } from '../snapshot-mapping.js';
import { GHN_STATUSES } from './reference-data.js';

/**
 * The fields of GHN's order detail the loader reads, under the envelope's `data`. Amounts are read as
 * text, since GHN writes them either as JSON numbers or as text.
 */
const GHN_DETAIL_ANSWER_FIELDS: JsonFields = {
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
 * accountAlias and seenAt): the columns every carrier's mapping gives (SnapshotMapping), GHN's where
 * it has them and NULL where it has none. Weights come in grams and are kept in kilograms,
 * as 247Express's; GHN's chargeable weight is the larger of the real and the converted one. The
 * status log is the order's status history; GHN's detail has no handling steps and no fees. Its COD
 * facts (collected, transferred, when) are checked by the contract and not kept here.
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
  CAST([] AS STRUCT(serviceID VARCHAR, serviceName VARCHAR, cost VARCHAR)[]) AS price_info,
  list_transform(coalesce(s.log, []), entry -> {
    "time": ${ghnInstant('entry.updated_date')}, status: entry.status, statusName: entry.status,
    trackingName: CAST(NULL AS VARCHAR), provinceName: CAST(NULL AS VARCHAR), postOfficeName: CAST(NULL AS VARCHAR)
  }) AS statuses,
  CAST([] AS STRUCT(statusID VARCHAR, statusName VARCHAR, postOfficeID VARCHAR, postOfficeName VARCHAR,
    provinceID VARCHAR, provinceName VARCHAR, dateChange TIMESTAMPTZ, notes VARCHAR)[]) AS trackings`;

/** How the loader reads GHN's order detail: the fields of its envelope's `data`. */
export const GHN_SNAPSHOT_MAPPING: SnapshotMapping = {
  answerFields: GHN_DETAIL_ANSWER_FIELDS,
  answerColumns: 'unnest(answer.data)',
  stagedColumns: GHN_STAGED_SNAPSHOT_COLUMNS,
};
