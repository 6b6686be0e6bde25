import type { DuckDBAppender } from '@duckdb/node-api';
import { countOf } from './result-values.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

/** A statement line as it is staged: amounts whole VND, fees by type (nonzero ones only). */
export interface StagedPayoutLine {
  readonly batchId: string;
  readonly batchDate: string;
  readonly orderCode: string;
  readonly lineKind: string;
  readonly batchTotal: number | null;
  readonly codCollected: number;
  readonly fees: ReadonlyMap<string, number>;
  readonly debts: number;
  readonly netPaid: number;
  readonly origin: string;
}

/** What an import changes, or with a dry run would change. */
export interface PayoutChanges {
  /** Lines new to the warehouse, or standing in for a line they correct. */
  readonly imported: number;
  /** Lines the warehouse holds already, the same in every value. */
  readonly unchanged: number;
  /** Batches some of whose stored lines a corrected statement replaces. */
  readonly batchesReplaced: number;
  /** Stored lines that move to payout_line_history. */
  readonly linesReplaced: number;
}

/** The record of one import in payout_imports. */
export interface PayoutImportRecord {
  readonly importId: string;
  readonly carrier: string;
  readonly layout: string;
  readonly source: string;
  readonly importedAt: string;
  readonly linesRead: number;
  readonly linesRejected: number;
  readonly rejectsFile: string | null;
}

const STAGED_LINES = 'staged_payout_lines';
const CHANGES = 'payout_changes';
const IDENTITY = 'batch_id, order_code, line_kind';
const COMPARED = [
  'batch_date',
  'batch_stated_total',
  'cod_collected',
  'fees_withheld',
  'debts',
  'net_paid',
  'fee_list',
];

/**
 * A line's fees in one text, by type (`fuel=6000;shipping=30000`): how a line's fees are compared with
 * a stored line's, and what its payout_line_fees rows are made from. Fee types hold no `=` or `;`.
 */
function feeList(fees: ReadonlyMap<string, number>): string {
  return [...fees]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([type, amount]) => `${type}=${amount}`)
    .join(';');
}

/**
 * A statement's lines for one carrier, staged in temporary tables beside the stored ones, then
 * compared with them and swapped in, in one transaction. Works on a read-only warehouse for a dry run.
 */
export class PayoutStatementStore {
  private lines: DuckDBAppender | undefined;

  private constructor(
    private readonly warehouse: Warehouse,
    private readonly carrier: string,
  ) {}

  /** Empty staging tables for `carrier`'s lines. */
  static async open(warehouse: Warehouse, carrier: string): Promise<PayoutStatementStore> {
    await warehouse.run(`
      CREATE OR REPLACE TEMP TABLE ${STAGED_LINES} (
        batch_id VARCHAR, order_code VARCHAR, line_kind VARCHAR, batch_date DATE, batch_stated_total BIGINT,
        cod_collected BIGINT, fees_withheld BIGINT, debts BIGINT, net_paid BIGINT, fee_list VARCHAR, origin VARCHAR)`);
    const store = new PayoutStatementStore(warehouse, carrier);
    store.lines = await warehouse.connection.createAppender(STAGED_LINES, 'main', 'temp');
    return store;
  }

  /** Stages one line; the file's reader has made sure no two share an identity. */
  stage(line: StagedPayoutLine): void {
    const lines = this.lines!;
    lines.appendVarchar(line.batchId);
    lines.appendVarchar(line.orderCode);
    lines.appendVarchar(line.lineKind);
    lines.appendVarchar(line.batchDate);
    if (line.batchTotal === null) lines.appendNull();
    else lines.appendBigInt(BigInt(line.batchTotal));
    lines.appendBigInt(BigInt(line.codCollected));
    lines.appendBigInt(BigInt([...line.fees.values()].reduce((sum, amount) => sum + amount, 0)));
    lines.appendBigInt(BigInt(line.debts));
    lines.appendBigInt(BigInt(line.netPaid));
    lines.appendVarchar(feeList(line.fees));
    lines.appendVarchar(line.origin);
    lines.endRow();
  }

  /** Flushes what is staged and closes the staging. */
  finishStaging(): void {
    this.lines?.flushSync();
    this.lines?.closeSync();
    this.lines = undefined;
  }

  /**
   * Compares the staged lines with the stored lines of the same batches. With `keepAbsent` (the
   * statement had rejected lines, one of which may be a stored line) a stored line the statement
   * lacks stays; without it the statement is the whole of its batches, and such a line is replaced.
   */
  async plan(keepAbsent: boolean): Promise<PayoutChanges> {
    const carrier = this.carrier;
    await this.warehouse.run(
      `CREATE OR REPLACE TEMP TABLE ${CHANGES} AS
       WITH stored AS (
         SELECT l.*, coalesce(f.fee_list, '') AS fee_list
         FROM payout_lines AS l
         LEFT JOIN (
           SELECT ${IDENTITY}, string_agg(fee_type || '=' || amount, ';' ORDER BY fee_type) AS fee_list
           FROM payout_line_fees WHERE carrier = $carrier GROUP BY ALL
         ) AS f USING (${IDENTITY})
         WHERE l.carrier = $carrier AND l.batch_id IN (SELECT batch_id FROM ${STAGED_LINES})
       )
       SELECT coalesce(s.batch_id, e.batch_id) AS batch_id,
              coalesce(s.order_code, e.order_code) AS order_code,
              coalesce(s.line_kind, e.line_kind) AS line_kind,
              CASE WHEN e.batch_id IS NULL THEN 'new'
                   WHEN s.batch_id IS NULL THEN CASE WHEN $keepAbsent THEN 'kept' ELSE 'absent' END
                   WHEN ${COMPARED.map((c) => `s.${c} IS NOT DISTINCT FROM e.${c}`).join(' AND ')} THEN 'same'
                   ELSE 'changed' END AS change
       FROM ${STAGED_LINES} AS s
       FULL OUTER JOIN stored AS e
         ON s.batch_id = e.batch_id AND s.order_code = e.order_code AND s.line_kind = e.line_kind`,
      { carrier, keepAbsent },
    );
    const reader = await this.warehouse.readAll(
      `SELECT count(*) FILTER (change IN ('new', 'changed')) AS imported,
              count(*) FILTER (change = 'same') AS unchanged,
              count(DISTINCT batch_id) FILTER (change IN ('changed', 'absent')) AS batches_replaced,
              count(*) FILTER (change IN ('changed', 'absent')) AS lines_replaced
       FROM ${CHANGES}`,
    );
    const row = reader.getRowObjectsJS()[0] ?? {};
    return {
      imported: countOf(row.imported),
      unchanged: countOf(row.unchanged),
      batchesReplaced: countOf(row.batches_replaced),
      linesReplaced: countOf(row.lines_replaced),
    };
  }

  /**
   * Swaps the planned changes in, in one transaction: each stored line replaced goes to
   * payout_line_history with its fees, the new and corrected lines come in, and the import is recorded.
   */
  async commit(changes: PayoutChanges, record: PayoutImportRecord): Promise<void> {
    const carrier = this.carrier;
    const replaced = `(SELECT ${IDENTITY} FROM ${CHANGES} WHERE change IN ('changed', 'absent'))`;
    const incoming = `(SELECT ${IDENTITY} FROM ${CHANGES} WHERE change IN ('new', 'changed'))`;
    const stamp = { carrier, importId: record.importId, importedAt: record.importedAt };
    await this.warehouse.transaction(async (sql: SqlRunner) => {
      await sql.run(
        `INSERT INTO payout_line_history BY NAME
         SELECT l.* EXCLUDE (carrier), $carrier AS carrier, coalesce(f.fees, '{}')::JSON AS fees,
                $importId AS replaced_by_import, $importedAt::TIMESTAMPTZ AS replaced_at
         FROM payout_lines AS l
         SEMI JOIN ${replaced} AS r USING (${IDENTITY})
         LEFT JOIN (
           SELECT ${IDENTITY}, '{' || string_agg(to_json(fee_type) || ':' || amount, ',' ORDER BY fee_type) || '}' AS fees
           FROM payout_line_fees WHERE carrier = $carrier GROUP BY ALL
         ) AS f USING (${IDENTITY})
         WHERE l.carrier = $carrier`,
        stamp,
      );
      for (const table of ['payout_line_fees', 'payout_lines'])
        await sql.run(
          `DELETE FROM ${table} AS t USING ${replaced} AS r
           WHERE t.carrier = $carrier AND t.batch_id = r.batch_id AND t.order_code = r.order_code AND t.line_kind = r.line_kind`,
          { carrier },
        );
      await sql.run(
        `INSERT INTO payout_lines BY NAME
         SELECT s.* EXCLUDE (fee_list), $carrier AS carrier, $importId AS import_id, $importedAt::TIMESTAMPTZ AS imported_at
         FROM ${STAGED_LINES} AS s SEMI JOIN ${incoming} AS c USING (${IDENTITY})`,
        stamp,
      );
      await sql.run(
        `INSERT INTO payout_line_fees BY NAME
         SELECT ${IDENTITY}, split_part(fee, '=', 1) AS fee_type, CAST(split_part(fee, '=', 2) AS BIGINT) AS amount,
                $carrier AS carrier
         FROM (
           SELECT ${IDENTITY}, unnest(string_split(fee_list, ';')) AS fee
           FROM ${STAGED_LINES} AS s SEMI JOIN ${incoming} AS c USING (${IDENTITY})
           WHERE fee_list <> ''
         )`,
        { carrier },
      );
      await sql.run(
        `INSERT INTO payout_imports VALUES ($importId, $carrier, $layout, $source, $importedAt::TIMESTAMPTZ,
           $linesRead, $imported, $unchanged, $batchesReplaced, $linesReplaced, $linesRejected, $rejectsFile)`,
        { ...record, ...changes },
      );
    });
  }
}
