import { findCarrier } from '../carriers/known-carriers.js';
import { spoolFileRows, withNdjsonSpool } from './ndjson-spool.js';
import { recordChangedRows } from './partition-change-ledger.js';
import { countOf } from './result-values.js';
import { sqlText } from './sql-literals.js';
import type { Warehouse } from './warehouse.js';

/** A run of whole lines of a callback journal segment, ending at `endOffset` bytes into it. */
export interface CallbackJournalSlice {
  readonly segment: string;
  readonly endOffset: number;
  /** The journal records (JSON text, see CallbackEventRecord), the unreadable lines left out. */
  readonly lines: readonly string[];
  /** Lines the slice held, readable or not. */
  readonly lineCount: number;
}

/** The SQL types of each journal field; the names are CallbackEventRecord's. */
const JOURNAL_FIELDS = {
  carrier: 'VARCHAR',
  eventId: 'VARCHAR',
  orderCode: 'VARCHAR',
  status: 'VARCHAR',
  statusName: 'VARCHAR',
  eventTime: 'TIMESTAMPTZ',
  transactionId: 'VARCHAR',
  deliveryDate: 'TIMESTAMPTZ',
  receiverName: 'VARCHAR',
  mailman: 'VARCHAR',
  deliveryNotes: 'VARCHAR',
  delayCode: 'VARCHAR',
  delayNotes: 'VARCHAR',
  requestFeedbackCount: 'INTEGER',
  description: 'VARCHAR',
  externalCode: 'VARCHAR',
  referenceCode: 'VARCHAR',
  failedAttempt: 'BOOLEAN',
  accountAlias: 'VARCHAR',
  authMethod: 'VARCHAR',
  receivedAt: 'TIMESTAMPTZ',
  body: 'JSON',
} as const;

const STAGED = 'staged_callback_events';

/** How far each journal segment has been loaded, in bytes. */
export async function readCallbackJournalProgress(warehouse: Warehouse): Promise<Map<string, number>> {
  const reader = await warehouse.readAll('SELECT segment, ingested_bytes FROM callback_journal_segments');
  return new Map(reader.getRowObjectsJS().map((row) => [row.segment as string, countOf(row.ingested_bytes)]));
}

/**
 * Loads a slice of a journal segment in one transaction: its events into `callback_events`, each under
 * the carrier its record names (an event already there is left as it is, so the carrier's retries and
 * a re-read slice add nothing), its failed delivery attempts (without a delay code the reason is
 * unknown, as tracking records it) into `delivery_failures` (identity carrier, order and time to the
 * second, so the same attempt seen by tracking makes one row, whose unknown reason the callback's
 * fills in; of one attempt's callbacks, one with a delay code first), and the segment's new offset. Returns how many events were new. A record the
 * previous release wrote names no carrier and no failed attempt: it is `legacyCarrier`'s, a failed
 * attempt when its status is one of that carrier's failed-attempt statuses.
 */
export async function loadCallbackJournalSlice(
  warehouse: Warehouse,
  slice: CallbackJournalSlice,
  spoolDir: string,
  legacyCarrier: string,
): Promise<number> {
  const legacyFailedStatuses = findCarrier(legacyCarrier)?.failedAttemptStatuses ?? [];
  const legacyFailed =
    legacyFailedStatuses.length === 0 ? 'false' : `status IN (${legacyFailedStatuses.map(sqlText).join(', ')})`;
  return withNdjsonSpool(spoolDir, 'callbacks', async (spool) => {
    const file = slice.lines.length === 0 ? undefined : await spool.write(slice.lines);
    return warehouse.loadTransaction(async (sql) => {
      let inserted = 0;
      if (file !== undefined) {
        await sql.run(
          `CREATE OR REPLACE TEMP TABLE ${STAGED} AS
           SELECT * REPLACE (coalesce(carrier, ${sqlText(legacyCarrier)}) AS carrier,
                             coalesce(failedAttempt, carrier IS NULL AND ${legacyFailed}) AS failedAttempt)
           FROM ${spoolFileRows('$file', file, JOURNAL_FIELDS)}
           QUALIFY row_number() OVER (PARTITION BY coalesce(carrier, ${sqlText(legacyCarrier)}), eventId ORDER BY receivedAt) = 1`,
          { file: file.path },
        );
        inserted = await sql.run(
          `INSERT INTO callback_events
           SELECT carrier, eventId, orderCode, status, statusName, eventTime, transactionId, deliveryDate, receiverName, mailman,
                  deliveryNotes, delayCode, delayNotes, requestFeedbackCount, description, externalCode, referenceCode,
                  accountAlias, authMethod, receivedAt, body
           FROM ${STAGED}
           ON CONFLICT DO NOTHING`,
        );
        await sql.run(
          `INSERT INTO delivery_failures (carrier, order_code, attempted_at, delay_code, delay_note, observed_at, source, callback_event_id)
           SELECT carrier, orderCode, date_trunc('second', eventTime), delayCode, delayNotes, receivedAt, 'callback', eventId
           FROM ${STAGED}
           WHERE failedAttempt
           QUALIFY row_number() OVER (PARTITION BY carrier, orderCode, date_trunc('second', eventTime) ORDER BY delayCode IS NULL, receivedAt) = 1
           ON CONFLICT (carrier, order_code, attempted_at) DO UPDATE SET
             delay_code = coalesce(delivery_failures.delay_code, excluded.delay_code),
             delay_note = coalesce(delivery_failures.delay_note, excluded.delay_note),
             -- The callback that gave the reason, else the one that recorded the attempt.
             callback_event_id = CASE WHEN delivery_failures.delay_code IS NULL AND excluded.delay_code IS NOT NULL
                                      THEN excluded.callback_event_id
                                      ELSE coalesce(delivery_failures.callback_event_id, excluded.callback_event_id) END`,
        );
        // The staged events, new or not, and the attempts they show: the partitions they may have changed.
        await recordChangedRows(sql, 'callback_events', `SELECT carrier, receivedAt AS received_at FROM ${STAGED}`);
        await recordChangedRows(
          sql,
          'delivery_failures',
          `SELECT carrier, date_trunc('second', eventTime) AS attempted_at FROM ${STAGED} WHERE failedAttempt`,
        );
        await sql.run(`DROP TABLE ${STAGED}`);
      }
      await sql.run(
        `INSERT INTO callback_journal_segments VALUES ($segment, $endOffset, $lineCount, current_timestamp)
         ON CONFLICT (segment) DO UPDATE SET
           ingested_bytes = greatest(callback_journal_segments.ingested_bytes, excluded.ingested_bytes),
           ingested_lines = callback_journal_segments.ingested_lines + excluded.ingested_lines,
           updated_at = excluded.updated_at`,
        { segment: slice.segment, endOffset: slice.endOffset, lineCount: slice.lineCount },
      );
      return inserted;
    }, `${slice.lineCount} callbacks`);
  });
}
