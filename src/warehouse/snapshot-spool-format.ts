import type { CarrierInstant, TrackingSnapshot } from '../carrier/contract.js';

/** A tracking snapshot to load, with who looked it up, when, and in which run. */
export interface LoadedSnapshot {
  readonly snapshot: TrackingSnapshot;
  readonly accountAlias: string;
  readonly seenAt: CarrierInstant;
  readonly runId: string;
}

/**
 * A snapshot already written as its spool line, with what the loader needs to pick the latest of an
 * order: what a batch holds while it gathers, a compact string instead of the snapshot's objects.
 */
export interface SpooledSnapshot {
  readonly orderCode: string;
  readonly seenAt: CarrierInstant;
  /** The snapshotSpoolLine. */
  readonly line: string;
}

export function spooledSnapshot(loaded: LoadedSnapshot): SpooledSnapshot {
  return { orderCode: loaded.snapshot.orderCode, seenAt: loaded.seenAt, line: snapshotSpoolLine(loaded) };
}

/**
 * The spool line of one snapshot: the contract's fields under their carrier (camelCase) names, so the
 * line is the snapshot as validated. Only known fields are written: a loose payload's extra fields
 * stay out of the warehouse (and out of read_json, which reads unknown keys slowly).
 */
export function snapshotSpoolLine(loaded: LoadedSnapshot): string {
  const s = loaded.snapshot;
  return JSON.stringify({
    runId: loaded.runId,
    accountAlias: loaded.accountAlias,
    seenAt: loaded.seenAt,
    orderCode: s.orderCode,
    externalCode: s.externalCode,
    acceptDate: s.acceptDate,
    status: s.status,
    statusName: s.statusName,
    trackingName: s.trackingName,
    delayCode: s.delayCode,
    delayNote: s.delayNote,
    deliveryNotes: s.deliveryNotes,
    deliveryDate: s.deliveryDate,
    poDeliveryID: s.poDeliveryID,
    mailMan: s.mailMan,
    receiverName: s.receiverName,
    serviceTypeID: s.serviceTypeID,
    mailerTypeID: s.mailerTypeID,
    extraServiceName: s.extraServiceName,
    length: s.length,
    width: s.width,
    height: s.height,
    realWeight: s.realWeight,
    calWeight: s.calWeight,
    weight: s.weight,
    quantity: s.quantity,
    price: s.price,
    priceFR: s.priceFR,
    farRegionFeeAmount: s.farRegionFeeAmount,
    fuelFeeAmount: s.fuelFeeAmount,
    vatAmount: s.vatAmount,
    totalServiceCost: s.totalServiceCost,
    edtFrom: s.edtFrom,
    edtTo: s.edtTo,
    senderID: s.senderID,
    senderName: s.senderName,
    postOfficeAcceptID: s.postOfficeAcceptID,
    codAmount: s.codAmount,
    estimateRoutes: s.estimateRoutes,
    confirmImage: s.confirmImage,
    priceInfo: s.priceInfo,
    statuses: s.statuses,
    trackings: s.trackings,
  });
}

/** Money is read as text and turned into DECIMAL(20,4) by moneyDecimal. */
const MONEY = 'VARCHAR';

/**
 * The exact DECIMAL(20,4) of a money text column. DuckDB 1.5 parses text into a DECIMAL wider than
 * 18 digits (a 128-bit integer) some 200 times slower than into DECIMAL(18,4) (20 µs against 0.1 µs a
 * value: it was most of a load's time), so amounts that fit 18 digits take the fast path. `text` must
 * be a plain column: over a struct field DuckDB evaluates both branches of the coalesce.
 */
export function moneyDecimal(text: string): string {
  return `coalesce(try_cast(${text} AS DECIMAL(18,4)), CAST(${text} AS DECIMAL(20,4)))`;
}

/** The SQL types read_json gives each spool field; instants become TIMESTAMPTZ, money stays text. */
const SPOOL_COLUMN_TYPES: Readonly<Record<string, string>> = {
  runId: 'VARCHAR',
  accountAlias: 'VARCHAR',
  seenAt: 'TIMESTAMPTZ',
  orderCode: 'VARCHAR',
  externalCode: 'VARCHAR',
  acceptDate: 'TIMESTAMPTZ',
  status: 'VARCHAR',
  statusName: 'VARCHAR',
  trackingName: 'VARCHAR',
  delayCode: 'VARCHAR',
  delayNote: 'VARCHAR',
  deliveryNotes: 'VARCHAR',
  deliveryDate: 'TIMESTAMPTZ',
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
  priceInfo: `STRUCT(serviceID VARCHAR, serviceName VARCHAR, cost ${MONEY})[]`,
  statuses: 'STRUCT("time" TIMESTAMPTZ, status VARCHAR, statusName VARCHAR, trackingName VARCHAR, provinceName VARCHAR, postOfficeName VARCHAR)[]',
  trackings:
    'STRUCT(statusID VARCHAR, statusName VARCHAR, postOfficeID VARCHAR, postOfficeName VARCHAR, provinceID VARCHAR, provinceName VARCHAR, dateChange TIMESTAMPTZ, notes VARCHAR)[]',
};

/** `read_json` over a snapshot spool file; `file` is SQL text, e.g. a parameter `$file`. */
export function readSnapshotSpool(file: string): string {
  const columns = Object.entries(SPOOL_COLUMN_TYPES)
    .map(([name, type]) => `${name}: '${type.replaceAll("'", "''")}'`)
    .join(', ');
  return `read_json(${file}, columns = {${columns}}, format = 'newline_delimited')`;
}

/**
 * Select list over a spool row `s`: the orders columns a snapshot carries (snake_case), its history
 * lists and its run bookkeeping. The loader adds is_terminal and first_seen_at, which need the
 * warehouse.
 */
export const STAGED_SNAPSHOT_COLUMNS = `
  s.orderCode AS order_code,
  s.accountAlias AS account_alias,
  s.externalCode AS external_code,
  s.acceptDate AS accept_date,
  s.status AS status,
  s.statusName AS status_name,
  s.trackingName AS tracking_name,
  s.delayCode AS delay_code,
  s.delayNote AS delay_note,
  s.deliveryNotes AS delivery_notes,
  s.deliveryDate AS delivery_date,
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
  s.estimateRoutes AS estimate_routes,
  s.confirmImage AS confirm_image,
  s.seenAt AS last_seen_at,
  s.runId AS last_run_id,
  s.priceInfo AS price_info,
  s.statuses AS statuses,
  s.trackings AS trackings`;

/** The staged columns that are lists, not orders columns. */
export const STAGED_HISTORY_LISTS = ['price_info', 'statuses', 'trackings'] as const;

/**
 * Rows of each history table from a relation of staged snapshots, one per list item; line_no / seq
 * is the item's position in the carrier's list, from 1. (generate_subscripts beside unnest walks the
 * list in step with it; it is several times faster than UNNEST ... WITH ORDINALITY in DuckDB 1.5.)
 */
export function historyRowsSelect(table: HistoryTable, staged: string): string {
  switch (table) {
    case 'order_charges':
      return `
        SELECT order_code, line_no, service_id, service_name, ${moneyDecimal('cost_text')} AS cost
        FROM (
          SELECT order_code, CAST(n AS INTEGER) AS line_no, line.serviceID AS service_id, line.serviceName AS service_name, line.cost AS cost_text
          FROM (SELECT order_code, generate_subscripts(price_info, 1) AS n, unnest(price_info) AS line FROM ${staged})
        )`;
    case 'order_statuses':
      return `
        SELECT order_code, CAST(n AS INTEGER) AS seq, entry."time" AS "time", entry.status AS status, entry.statusName AS status_name,
               entry.trackingName AS tracking_name, entry.provinceName AS province_name, entry.postOfficeName AS post_office_name
        FROM (SELECT order_code, generate_subscripts(statuses, 1) AS n, unnest(statuses) AS entry FROM ${staged})`;
    case 'order_trackings':
      return `
        SELECT order_code, CAST(n AS INTEGER) AS seq, event.statusID AS status_id, event.statusName AS status_name,
               event.postOfficeID AS post_office_id, event.postOfficeName AS post_office_name, event.provinceID AS province_id,
               event.provinceName AS province_name, event.dateChange AS date_change, event.notes AS notes
        FROM (SELECT order_code, generate_subscripts(trackings, 1) AS n, unnest(trackings) AS event FROM ${staged})`;
  }
}

export const HISTORY_TABLES = ['order_charges', 'order_statuses', 'order_trackings'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];
