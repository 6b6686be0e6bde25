import { countOf } from './result-values.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

/** What finance says of a finding: in dispute with the carrier, settled, or open again. */
export const FINDING_MARK_KINDS = ['disputed', 'settled', 'open'] as const;
export type FindingMarkKind = (typeof FINDING_MARK_KINDS)[number];

/** A COD finding's identity: its check, carrier, batch and order ('' where the check has none). */
export interface FindingKey {
  readonly finding: string;
  readonly carrier: string;
  readonly batchId: string;
  readonly orderCode: string;
}

/** A mark to give a finding, with the finding's money at stake now. */
export interface FindingMark extends FindingKey {
  readonly mark: FindingMarkKind;
  readonly note: string;
  readonly markedBy: string;
  readonly atStake: number;
  /** Where the mark was asked: `command line`, or `FILE:LINE` of a report read back. */
  readonly origin: string;
}

/** What marking changes, or with a dry run would change. */
export interface FindingMarkChanges {
  /** Findings with no mark before. */
  readonly marked: number;
  /** Findings whose mark, note or amount changes: the stored mark moves to the history. */
  readonly replaced: number;
  /** Findings marked already with the same mark, note and amount. */
  readonly unchanged: number;
}

const STAGED_MARKS = 'staged_cod_finding_marks';
const MARK_CHANGES = 'cod_finding_mark_changes';
const KEY = 'finding, carrier, batch_id, order_code';

/**
 * Marks of COD findings, staged in a temporary table beside the stored ones, compared with them and
 * swapped in, in one transaction: a mark replaced goes to cod_finding_mark_history. Staging and
 * comparing work on a read-only warehouse, for a dry run.
 */
export class FindingMarkStore {
  private constructor(private readonly warehouse: Warehouse) {}

  /** Stages `marks` (one per finding: the caller has made sure) and compares them with the stored ones. */
  static async plan(
    warehouse: Warehouse,
    marks: readonly FindingMark[],
  ): Promise<{ store: FindingMarkStore; changes: FindingMarkChanges }> {
    await warehouse.run(`
      CREATE OR REPLACE TEMP TABLE ${STAGED_MARKS} (
        finding VARCHAR, carrier VARCHAR, batch_id VARCHAR, order_code VARCHAR, mark VARCHAR, note VARCHAR,
        marked_by VARCHAR, at_stake BIGINT, origin VARCHAR)`);
    const appender = await warehouse.connection.createAppender(STAGED_MARKS, 'main', 'temp');
    for (const m of marks) {
      for (const text of [m.finding, m.carrier, m.batchId, m.orderCode, m.mark, m.note, m.markedBy])
        appender.appendVarchar(text);
      appender.appendBigInt(BigInt(m.atStake));
      appender.appendVarchar(m.origin);
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
    await warehouse.run(
      `CREATE OR REPLACE TEMP TABLE ${MARK_CHANGES} AS
       SELECT s.finding, s.carrier, s.batch_id, s.order_code,
              CASE WHEN m.finding IS NULL THEN 'new'
                   WHEN m.mark = s.mark AND m.note = s.note AND m.at_stake = s.at_stake THEN 'same'
                   ELSE 'replaced' END AS change
       FROM ${STAGED_MARKS} AS s LEFT JOIN cod_finding_marks AS m USING (${KEY})`,
    );
    const [row = {}] = (
      await warehouse.readAll(
        `SELECT count(*) FILTER (change = 'new') AS marked, count(*) FILTER (change = 'replaced') AS replaced,
                count(*) FILTER (change = 'same') AS unchanged
         FROM ${MARK_CHANGES}`,
      )
    ).getRowObjectsJS();
    return {
      store: new FindingMarkStore(warehouse),
      changes: { marked: countOf(row.marked), replaced: countOf(row.replaced), unchanged: countOf(row.unchanged) },
    };
  }

  /** Swaps the planned marks in, in one transaction: each stored mark replaced moves to the history first. */
  async commit(markedAt: string): Promise<void> {
    const changed = `(SELECT ${KEY} FROM ${MARK_CHANGES} WHERE change IN ('new', 'replaced'))`;
    await this.warehouse.transaction(async (sql: SqlRunner) => {
      await sql.run(
        `INSERT INTO cod_finding_mark_history BY NAME
         SELECT m.*, $markedAt::TIMESTAMPTZ AS replaced_at
         FROM cod_finding_marks AS m SEMI JOIN ${changed} AS c USING (${KEY})`,
        { markedAt },
      );
      await sql.run(
        `DELETE FROM cod_finding_marks AS m USING ${changed} AS c
         WHERE m.finding = c.finding AND m.carrier = c.carrier AND m.batch_id = c.batch_id AND m.order_code = c.order_code`,
      );
      await sql.run(
        `INSERT INTO cod_finding_marks BY NAME
         SELECT s.*, $markedAt::TIMESTAMPTZ AS marked_at
         FROM ${STAGED_MARKS} AS s SEMI JOIN ${changed} AS c USING (${KEY})`,
        { markedAt },
      );
    });
  }
}

/** Every mark, the stored ones and (with `history`) those they replaced: per finding, its mark now, then the replaced ones, the latest replaced first. */
export function findingMarksQuery(history: boolean): string {
  const current = `SELECT *, NULL::TIMESTAMPTZ AS replaced_at FROM cod_finding_marks`;
  const all = history ? `${current} UNION ALL BY NAME SELECT * FROM cod_finding_mark_history` : current;
  return `SELECT finding, carrier, batch_id, order_code, mark, note, marked_by, marked_at, at_stake, origin, replaced_at
          FROM (${all}) ORDER BY ${KEY}, replaced_at DESC NULLS FIRST, marked_at DESC`;
}
