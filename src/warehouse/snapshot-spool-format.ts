import { type JsonFields, moneyDecimal } from '../carriers/answer-sql.js';
import type { CarrierInstant } from '../carriers/carrier-time.js';
import type { SnapshotMapping } from '../carriers/snapshot-mapping.js';
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

/** The fields of a spool line (answerSpoolLine), its answer's as the carrier's mapping reads them. */
export function spoolLineFields(mapping: SnapshotMapping): JsonFields {
  return { runId: 'VARCHAR', accountAlias: 'VARCHAR', seenAt: 'TIMESTAMPTZ', answer: mapping.answerFields };
}

/** A spool file of snapshot lines; `answerLog` when it is an answer log's, whose other lines are left out. */
export type SnapshotSpoolFile = Pick<SpoolFile, 'path' | 'longestLineBytes'> & { readonly answerLog?: boolean };

/**
 * The snapshots of a spool file (an answer log's `ok` lines, or every line of a file of snapshots
 * alone) of a carrier's answers, one column per answer field (as its mapping reads them) beside runId,
 * accountAlias and seenAt, read by `reader`; `fileSql` is the file's path as SQL text, e.g. a
 * parameter `$file`. A file of snapshots alone is read without a filter, which keeps the read
 * streaming within the least memory.
 */
export function readSnapshotSpool(
  fileSql: string,
  file: SnapshotSpoolFile,
  mapping: SnapshotMapping,
  reader?: SpoolReader,
): string {
  const columns = `runId, accountAlias, seenAt, ${mapping.answerColumns}`;
  if (!file.answerLog)
    return `(SELECT ${columns} FROM ${spoolFileRows(fileSql, file, spoolLineFields(mapping), reader)})`;
  const fields = { ...spoolLineFields(mapping), outcome: 'VARCHAR' };
  return `(SELECT ${columns} FROM ${spoolFileRows(fileSql, file, fields, reader)} WHERE outcome = 'ok')`;
}

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
