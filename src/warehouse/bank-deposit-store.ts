import { countOf } from './result-values.js';
import type { Warehouse } from './warehouse.js';

/** A deposit as it is staged: its identity (day, whole VND, reference) and where it was read. */
export interface StagedDeposit {
  readonly day: string;
  readonly amount: number;
  readonly reference: string;
  readonly origin: string;
}

const STAGED_DEPOSITS = 'staged_bank_deposits';

/**
 * Stages a bank export's deposits beside the stored ones and counts the new ones; `commit` adds them,
 * in one transaction. A deposit stored already (same day, amount and reference) changes nothing.
 * Staging and counting work on a read-only warehouse, for a dry run.
 */
export async function planDeposits(
  warehouse: Warehouse,
  deposits: readonly StagedDeposit[],
): Promise<{ added: number; unchanged: number; commit: (importId: string, importedAt: string) => Promise<void> }> {
  await warehouse.run(
    `CREATE OR REPLACE TEMP TABLE ${STAGED_DEPOSITS} (deposit_day DATE, amount BIGINT, reference VARCHAR, origin VARCHAR)`,
  );
  const appender = await warehouse.connection.createAppender(STAGED_DEPOSITS, 'main', 'temp');
  for (const d of deposits) {
    appender.appendVarchar(d.day);
    appender.appendBigInt(BigInt(d.amount));
    appender.appendVarchar(d.reference);
    appender.appendVarchar(d.origin);
    appender.endRow();
  }
  appender.flushSync();
  appender.closeSync();
  const fresh = `(SELECT s.* FROM ${STAGED_DEPOSITS} AS s ANTI JOIN bank_deposits AS b USING (deposit_day, amount, reference))`;
  const [row = {}] = (await warehouse.readAll(`SELECT count(*) AS added FROM ${fresh}`)).getRowObjectsJS();
  const added = countOf(row.added);
  return {
    added,
    unchanged: deposits.length - added,
    commit: (importId, importedAt) =>
      warehouse.transaction(async (sql) => {
        await sql.run(
          `INSERT INTO bank_deposits BY NAME
           SELECT *, $importId AS import_id, $importedAt::TIMESTAMPTZ AS imported_at FROM ${fresh}`,
          { importId, importedAt },
        );
      }),
  };
}
