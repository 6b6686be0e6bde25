import type { CarrierInstant } from '../carriers/247express/contract.js';
import { carrierInstant, type JsonFields, moneyDecimal } from '../carriers/answer-sql.js';
import { type SpoolFile, type SpoolReader, spoolFileRows } from './ndjson-spool.js';

/** Who looked an answer up, when, and in which run. */
export interface AnswerSighting {
  readonly runId: string;
  /** The order code looked up (a snapshot's own orderCode). */
  readonly orderCode: string;
  readonly accountAlias: string;
  readonly seenAt: CarrierInstant;
}

/**
 * A tracking answer as it came, with who looked it up, when, and in which run. The loader reads the
 * answer's JSON itself (only answers the contract accepted as snapshots, checkTrackingResult): DuckDB
 * turns its date-times and money into the warehouse's types as the contract reads them, so no snapshot
 * object is serialized again.
 */
export interface SpooledAnswer extends AnswerSighting {
  /** The answer's JSON text as the carrier sent it. */
  readonly body: string;
}

/**
 * A snapshot already written as its spool line, with what the loader needs to pick the latest of an
 * order.
 */
export interface SpooledSnapshot {
  readonly orderCode: string;
  readonly seenAt: CarrierInstant;
  /** The answerSpoolLine. */
  readonly line: string;
}

export function spooledSnapshot(answer: SpooledAnswer): SpooledSnapshot {
  return { orderCode: answer.orderCode, seenAt: answer.seenAt, line: answerSpoolLine(answer) };
}

/** Line breaks in a JSON text can only be whitespace between its tokens (inside strings they are escaped). */
const LINE_BREAKS = /[\r\n]/g;

/** What comes between the run's fields and the answer in a spool line. */
export const ANSWER_KEY = ',"answer":';

/**
 * The spool line of one answer: the run's fields, then the carrier's answer as it came, on one line
 * (`{"runId":…,"orderCode":…,"accountAlias":…,"seenAt":…,"answer":{…}}`; line breaks between its
 * tokens become spaces). The loader reads snapshot lines; the raw spool keeps every answer's.
 */
export function answerSpoolLine(answer: SpooledAnswer): string {
  const body =
    answer.body.includes('\n') || answer.body.includes('\r') ? answer.body.replace(LINE_BREAKS, ' ') : answer.body;
  return `${answerSpoolLineStart(answer)}${body}${ANSWER_SPOOL_LINE_END}`;
}

/** A spool line up to its answer: for a writer that adds the answer's bytes as they came (line breaks made spaces), then the end. */
export function answerSpoolLineStart(sighting: AnswerSighting, lookup?: AnswerLookup): string {
  const lookupFields = lookup === undefined ? '' : `,${JSON.stringify(lookup).slice(1, -1)}`;
  return `{"runId":${JSON.stringify(sighting.runId)},"orderCode":${JSON.stringify(sighting.orderCode)},"accountAlias":${JSON.stringify(sighting.accountAlias)},"seenAt":"${sighting.seenAt}"${lookupFields}${ANSWER_KEY}`;
}

/**
 * How an answer in the answer log ended its lookup, written between the sighting and the answer: a
 * snapshot (`ok`) or a carrier error that was the order's outcome, with what gives it its
 * lookup_results row again after a kill; or `passed`, an answer that was no order's outcome (a retried
 * error, a spent key), kept for the record only.
 */
export type AnswerLookup =
  | {
      readonly outcome: 'ok' | 'carrier_error';
      /** The code looked up (a snapshot's orderCode may name another). */
      readonly askedCode: string;
      readonly origin: string;
      readonly attempts: number;
      readonly errorCode: string | null;
      readonly errorMessage: string | null;
    }
  | { readonly outcome: 'passed' };

/** The answer of a carrier error that came without a body (its lookup is logged all the same); not an answer to replay. */
export const NO_ANSWER = 'null';

export const ANSWER_SPOOL_LINE_END = '}';

/**
 * The answer's text in a line written by answerSpoolLine. The run's fields are JSON strings, in which
 * a quote is escaped, so the first `,"answer":` is the one before the answer.
 */
export function answerTextOfSpoolLine(line: string): string {
  return line.slice(line.indexOf(ANSWER_KEY) + ANSWER_KEY.length, line.lastIndexOf('}'));
}

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

/** The fields of a spool line (answerSpoolLine), the answer's as ANSWER_FIELDS. */
export const SPOOL_LINE_FIELDS: JsonFields = {
  runId: 'VARCHAR',
  accountAlias: 'VARCHAR',
  seenAt: 'TIMESTAMPTZ',
  answer: ANSWER_FIELDS,
};

/** A spool file of snapshot lines; `answerLog` when it is an answer log's, whose other lines are left out. */
export type SnapshotSpoolFile = Pick<SpoolFile, 'path' | 'longestLineBytes'> & { readonly answerLog?: boolean };

/**
 * The snapshots of a spool file (an answer log's `ok` lines, or every line of a file of snapshots
 * alone), one column per answer field beside runId, accountAlias and seenAt, read by `reader`;
 * `fileSql` is the file's path as SQL text, e.g. a parameter `$file`. A file of snapshots alone is
 * read without a filter, which keeps the read streaming within the least memory.
 */
export function readSnapshotSpool(fileSql: string, file: SnapshotSpoolFile, reader?: SpoolReader): string {
  if (!file.answerLog)
    return `(SELECT runId, accountAlias, seenAt, unnest(answer) FROM ${spoolFileRows(fileSql, file, SPOOL_LINE_FIELDS, reader)})`;
  const fields = { ...SPOOL_LINE_FIELDS, outcome: 'VARCHAR' };
  return `(SELECT runId, accountAlias, seenAt, unnest(answer) FROM ${spoolFileRows(fileSql, file, fields, reader)} WHERE outcome = 'ok')`;
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

/**
 * The date of a staged snapshot's order (orders.order_date, by which reports select a range): its
 * accept date, else the earliest time of its status or handling history; null when it has neither,
 * for the loader to date by when the warehouse first stored the order.
 */
export const STAGED_ORDER_DATE = `coalesce(accept_date, least(
  list_min(list_transform(statuses, entry -> entry."time")), list_min(list_transform(trackings, event -> event.dateChange))))`;

/** The staged columns that are lists, not orders columns. */
export const STAGED_HISTORY_LISTS = ['price_info', 'statuses', 'trackings'] as const;

/**
 * Rows of each history table from a relation of staged snapshots, one per list item; line_no / seq
 * is the item's position in the carrier's list, from 1. (generate_subscripts beside unnest walks the
 * list in step with it, faster than UNNEST ... WITH ORDINALITY.)
 */
export function historyRowsSelect(table: HistoryTable, staged: string): string {
  switch (table) {
    case 'order_charges':
      return `
        SELECT carrier, order_code, line_no, service_id, service_name, ${moneyDecimal('cost_text')} AS cost
        FROM (
          SELECT carrier, order_code, CAST(n AS INTEGER) AS line_no, line.serviceID AS service_id, line.serviceName AS service_name, line.cost AS cost_text
          FROM (SELECT carrier, order_code, generate_subscripts(price_info, 1) AS n, unnest(price_info) AS line FROM ${staged})
        )`;
    case 'order_statuses':
      return `
        SELECT carrier, order_code, CAST(n AS INTEGER) AS seq, entry."time" AS "time", entry.status AS status, entry.statusName AS status_name,
               entry.trackingName AS tracking_name, entry.provinceName AS province_name, entry.postOfficeName AS post_office_name
        FROM (SELECT carrier, order_code, generate_subscripts(statuses, 1) AS n, unnest(statuses) AS entry FROM ${staged})`;
    case 'order_trackings':
      return `
        SELECT carrier, order_code, CAST(n AS INTEGER) AS seq, event.statusID AS status_id, event.statusName AS status_name,
               event.postOfficeID AS post_office_id, event.postOfficeName AS post_office_name, event.provinceID AS province_id,
               event.provinceName AS province_name, event.dateChange AS date_change, event.notes AS notes
        FROM (SELECT carrier, order_code, generate_subscripts(trackings, 1) AS n, unnest(trackings) AS event FROM ${staged})`;
  }
}

export const HISTORY_TABLES = ['order_charges', 'order_statuses', 'order_trackings'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];
