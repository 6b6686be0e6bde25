import type { JsonFields } from './answer-sql.js';

/**
 * How the loader reads one carrier's answers from the answer log into the warehouse's order columns:
 * DuckDB reads each line's `answer` as `answerFields`, `answerColumns` spreads it into columns of a
 * row `s` beside the line's runId, accountAlias and seenAt, and `stagedColumns`, a select list over
 * `s`, gives the same columns for every carrier: the orders' columns (snake_case, the warehouse's
 * types, the COD facts included), last_seen_at and last_run_id, and the lists price_info, statuses and
 * trackings.
 */
export interface SnapshotMapping {
  readonly answerFields: JsonFields;
  readonly answerColumns: string;
  readonly stagedColumns: string;
}

/** The COD fact columns of a carrier whose answer gives none (its statements alone tell). */
export const NO_COD_FACTS = `CAST(NULL AS BOOLEAN) AS cod_collected, CAST(NULL AS TIMESTAMPTZ) AS cod_collected_at,
  CAST(NULL AS BOOLEAN) AS cod_transferred, CAST(NULL AS TIMESTAMPTZ) AS cod_transferred_at`;
