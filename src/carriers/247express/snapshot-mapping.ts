import { carrierInstant, type JsonFields, moneyDecimal } from '../answer-sql.js';
import { NO_COD_FACTS, type SnapshotMapping } from '../snapshot-mapping.js';

/** Money and instants are read as text and converted by moneyDecimal and carrierInstant. */
const MONEY = 'VARCHAR';
const DATE_TIME = 'VARCHAR';

/**
 * The SQL types the answer's fields are read as. Only the contract's fields are read: a loose
 * answer's extra fields stay out of the warehouse.
 */
const ANSWER_FIELDS: JsonFields = {
  orderCode: 'VARCHAR',
  externalCode: 'VARCHAR',
  acceptDate: DATE_TIME,
  status: 'VARCHAR',
  statusName: 'VARCHAR',
  trackingName: 'VARCHAR',
  delayCode: 'VARCHAR',
  delayNote: 'VARCHAR',
  deliveryNotes: 'VARCHAR',
  deliveryDate: DATE_TIME,
  poDeliveryID: 'JSON',
  mailMan: 'JSON',
  receiverName: 'VARCHAR',
  serviceTypeID: 'VARCHAR',
  mailerTypeID: 'VARCHAR',
  extraServiceName: 'VARCHAR',
  length: 'DOUBLE',
  width: 'DOUBLE',
  height: 'DOUBLE',
  realWeight: 'DOUBLE',
  calWeight: 'DOUBLE',
  weight: 'DOUBLE',
  quantity: 'INTEGER',
  price: MONEY,
  priceFR: MONEY,
  farRegionFeeAmount: MONEY,
  fuelFeeAmount: MONEY,
  vatAmount: MONEY,
  totalServiceCost: MONEY,
  edtFrom: 'JSON',
  edtTo: 'JSON',
  senderID: 'JSON',
  senderName: 'JSON',
  postOfficeAcceptID: 'JSON',
  codAmount: MONEY,
  estimateRoutes: 'JSON',
  confirmImage: 'JSON',
  priceInfo: [{ serviceID: 'VARCHAR', serviceName: 'VARCHAR', cost: MONEY }],
  statuses: [
    {
      time: DATE_TIME,
      status: 'VARCHAR',
      statusName: 'VARCHAR',
      trackingName: 'VARCHAR',
      provinceName: 'VARCHAR',
      postOfficeName: 'VARCHAR',
    },
  ],
  trackings: [
    {
      statusID: 'VARCHAR',
      statusName: 'VARCHAR',
      postOfficeID: 'VARCHAR',
      postOfficeName: 'VARCHAR',
      provinceID: 'VARCHAR',
      provinceName: 'VARCHAR',
      dateChange: DATE_TIME,
      notes: 'VARCHAR',
    },
  ],
};

/**
 * Select list over a spool row `s`: the orders columns a snapshot carries (snake_case), its history
 * lists and its run bookkeeping. Its answer says nothing of the COD money but its amount. The loader adds is_terminal and first_seen_at, which need the
 * warehouse.
 */
const STAGED_SNAPSHOT_COLUMNS = `
  s.orderCode AS order_code,
  s.accountAlias AS account_alias,
  s.externalCode AS external_code,
  ${carrierInstant('s.acceptDate')} AS accept_date,
  s.status AS status,
  s.statusName AS status_name,
  s.trackingName AS tracking_name,
  s.delayCode AS delay_code,
  s.delayNote AS delay_note,
  s.deliveryNotes AS delivery_notes,
  ${carrierInstant('s.deliveryDate')} AS delivery_date,
  s.poDeliveryID AS po_delivery_id,
  s.mailMan AS mail_man,
  s.receiverName AS receiver_name,
  s.serviceTypeID AS service_type_id,
  s.mailerTypeID AS mailer_type_id,
  s.extraServiceName AS extra_service_name,
  s.length AS length,
  s.width AS width,
  s.height AS height,
  s.realWeight AS real_weight,
  s.calWeight AS cal_weight,
  s.weight AS weight,
  s.quantity AS quantity,
  ${moneyDecimal('s.price')} AS price,
  ${moneyDecimal('s.priceFR')} AS price_fr,
  ${moneyDecimal('s.farRegionFeeAmount')} AS far_region_fee_amount,
  ${moneyDecimal('s.fuelFeeAmount')} AS fuel_fee_amount,
  ${moneyDecimal('s.vatAmount')} AS vat_amount,
  ${moneyDecimal('s.totalServiceCost')} AS total_service_cost,
  s.edtFrom AS edt_from,
  s.edtTo AS edt_to,
  s.senderID AS sender_id,
  s.senderName AS sender_name,
  s.postOfficeAcceptID AS post_office_accept_id,
  ${moneyDecimal('s.codAmount')} AS cod_amount,
  ${NO_COD_FACTS},
  s.estimateRoutes AS estimate_routes,
  s.confirmImage AS confirm_image,
  s.seenAt AS last_seen_at,
  s.runId AS last_run_id,
  coalesce(s.priceInfo, []) AS price_info,
  list_transform(coalesce(s.statuses, []), entry -> {
    "time": ${carrierInstant('entry."time"')}, status: entry.status, statusName: entry.statusName, trackingName: entry.trackingName,
    provinceName: entry.provinceName, postOfficeName: entry.postOfficeName
  }) AS statuses,
  list_transform(coalesce(s.trackings, []), event -> {
    statusID: event.statusID, statusName: event.statusName, postOfficeID: event.postOfficeID, postOfficeName: event.postOfficeName,
    provinceID: event.provinceID, provinceName: event.provinceName, dateChange: ${carrierInstant('event.dateChange')}, notes: event.notes
  }) AS trackings`;

/** How the loader reads 247Express's tracking result: its fields at the answer's top level. */
export const EXPRESS_SNAPSHOT_MAPPING: SnapshotMapping = {
  answerFields: ANSWER_FIELDS,
  answerColumns: 'unnest(answer)',
  stagedColumns: STAGED_SNAPSHOT_COLUMNS,
};
