import { rm } from 'node:fs/promises';
import { epochMsToInstant } from '../carriers/carrier-time.js';
import { bankDepositRows } from '../sources/bank-deposit-rows.js';
import type { TableSource } from '../sources/table-rows.js';
import { planDeposits, type StagedDeposit } from '../warehouse/bank-deposit-store.js';
import { dataFolder } from '../warehouse/data-folder.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { type RejectedInput, RejectsFile } from './rejects-file.js';
import { newRunId } from './run-lifecycle.js';

export interface DepositImportSummary {
  readonly importId: string;
  readonly dryRun: boolean;
  readonly read: number;
  readonly added: number;
  readonly unchanged: number;
  readonly rejected: number;
  /** The rejects file, when a row was rejected and the import was not a dry run. */
  readonly rejectsFile: string | null;
  /** The first rejections, for the summary a person reads. */
  readonly rejections: readonly RejectedInput[];
}

const SHOWN_REJECTIONS = 10;

/**
 * Imports the carrier's deposits from a bank export: each row read and checked, the new ones added in
 * one transaction; a deposit stored already changes nothing, and one the file gives twice is rejected
 * the second time. A rejected row is in the rejects file (not on a dry run) and the summary.
 */
export async function importBankDeposits(options: {
  readonly warehouse: Warehouse;
  readonly source: TableSource;
  readonly dataDir: string;
  readonly nowMs: number;
  readonly dryRun: boolean;
}): Promise<DepositImportSummary> {
  const importId = newRunId('deposits', options.nowMs);
  const rejects = new RejectsFile(dataFolder(options.dataDir).rejectsFile(importId));
  const rejections: RejectedInput[] = [];
  const deposits: StagedDeposit[] = [];
  const seen = new Map<string, string>();
  let read = 0;
  const reject = async (origin: string, reason: string) => {
    if (rejections.length < SHOWN_REJECTIONS)
      rejections.push({ origin, orderCode: null, rejectCode: 'BAD_VALUE', reason });
    if (!options.dryRun) await rejects.add({ origin, orderCode: null, rejectCode: 'BAD_VALUE', reason });
  };
  try {
    for await (const item of bankDepositRows(options.source)) {
      read++;
      if (item.kind === 'rejected') {
        await reject(item.rejection.origin, item.rejection.reason);
        continue;
      }
      const { day, amount, reference, origin } = item.deposit;
      const identity = JSON.stringify([day, amount, reference]);
      const earlier = seen.get(identity);
      if (earlier !== undefined) {
        await reject(origin, `the same deposit (day, amount, reference) as ${earlier}`);
        continue;
      }
      seen.set(identity, origin);
      deposits.push(item.deposit);
    }
  } catch (error) {
    await rejects.close().catch(() => undefined);
    await rm(rejects.path, { force: true });
    throw error;
  }
  await rejects.close();
  const plan = await planDeposits(options.warehouse, deposits);
  if (!options.dryRun) await plan.commit(importId, epochMsToInstant(options.nowMs));
  return {
    importId,
    dryRun: options.dryRun,
    read,
    added: plan.added,
    unchanged: plan.unchanged,
    rejected: read - deposits.length,
    rejectsFile: !options.dryRun && rejects.count > 0 ? rejects.path : null,
    rejections,
  };
}
