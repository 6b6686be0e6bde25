import { rm } from 'node:fs/promises';
import { epochMsToInstant } from '../carriers/carrier-time.js';
import type { PayoutLayout } from '../sources/payout-layouts.js';
import { type StatementLine, statementLines } from '../sources/payout-statement-lines.js';
import { describeTable, type TableSource } from '../sources/table-rows.js';
import { dataFolder } from '../warehouse/data-folder.js';
import { type PayoutChanges, PayoutStatementStore } from '../warehouse/payout-statement-store.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { type RejectedInput, RejectsFile } from './rejects-file.js';
import { newRunId } from './run-lifecycle.js';

export interface PayoutImportOptions {
  readonly warehouse: Warehouse;
  readonly source: TableSource;
  readonly carrier: string;
  readonly layout: PayoutLayout;
  /** Where the rejects file goes: `rejects/IMPORT_ID.csv` in it. */
  readonly dataDir: string;
  readonly nowMs: number;
  /** Read and compare, change nothing and write no rejects file. */
  readonly dryRun: boolean;
}

export interface PayoutImportSummary extends PayoutChanges {
  readonly importId: string;
  readonly dryRun: boolean;
  readonly linesRead: number;
  readonly rejected: number;
  /** The rejects file, when a line was rejected and the import was not a dry run. */
  readonly rejectsFile: string | null;
  /** The first rejections, for the summary a person reads. */
  readonly rejections: readonly RejectedInput[];
}

const SHOWN_REJECTIONS = 10;

/** What one batch's lines agree on: its date and stated total, as its first line gave them. */
interface BatchFacts {
  readonly batchDate: string;
  readonly batchTotal: number | null;
  readonly origin: string;
}

/**
 * Why a line cannot stand beside the lines read before it: a second line of the same identity, or a
 * batch date or stated total other than its batch's first line gave.
 */
function conflictOf(
  line: StatementLine,
  seen: Map<string, string>,
  batches: Map<string, BatchFacts>,
): string | undefined {
  const identity = JSON.stringify([line.batchId, line.orderCode, line.lineKind]);
  const earlier = seen.get(identity);
  if (earlier !== undefined)
    return `batch ${line.batchId} holds a ${line.lineKind} line of order ${line.orderCode} already (${earlier})`;
  const batch = batches.get(line.batchId);
  if (batch !== undefined && batch.batchDate !== line.batchDate)
    return `batch ${line.batchId} is dated ${batch.batchDate} (${batch.origin}), this line ${line.batchDate}`;
  if (
    batch !== undefined &&
    line.batchTotal !== null &&
    batch.batchTotal !== null &&
    batch.batchTotal !== line.batchTotal
  )
    return `batch ${line.batchId} states a total of ${batch.batchTotal} (${batch.origin}), this line ${line.batchTotal}`;
  seen.set(identity, line.origin);
  if (batch === undefined)
    batches.set(line.batchId, { batchDate: line.batchDate, batchTotal: line.batchTotal, origin: line.origin });
  return undefined;
}

/**
 * Imports a carrier's payout statement: each line read, checked and staged beside the stored lines,
 * then compared with them and swapped in, in one transaction. A line whose identity (carrier, batch,
 * order, kind) is stored with the same values changes nothing; a batch the statement corrects has its
 * stored lines replaced, each kept in payout_line_history. A statement with a rejected line removes no
 * stored line it lacks: the rejected line may be that one.
 */
export async function importPayoutStatement(options: PayoutImportOptions): Promise<PayoutImportSummary> {
  const { warehouse, carrier, layout, dryRun } = options;
  const importId = newRunId('payouts', options.nowMs);
  const rejects = new RejectsFile(dataFolder(options.dataDir).rejectsFile(importId));
  const rejections: RejectedInput[] = [];
  const reject = async (rejected: RejectedInput) => {
    if (rejections.length < SHOWN_REJECTIONS) rejections.push(rejected);
    if (!dryRun) await rejects.add(rejected);
  };
  const store = await PayoutStatementStore.open(warehouse, carrier);
  const seen = new Map<string, string>();
  const batches = new Map<string, BatchFacts>();
  let linesRead = 0;
  let rejected = 0;
  try {
    for await (const item of statementLines(options.source, layout)) {
      linesRead++;
      if (item.kind === 'rejected') {
        rejected++;
        const { origin, reason } = item.rejection;
        await reject({ origin, orderCode: item.orderCode, rejectCode: item.code, reason });
        continue;
      }
      const conflict = conflictOf(item.line, seen, batches);
      if (conflict !== undefined) {
        rejected++;
        await reject({
          origin: item.line.origin,
          orderCode: item.line.orderCode,
          rejectCode: 'CONFLICTING_LINE',
          reason: conflict,
        });
        continue;
      }
      store.stage(item.line);
    }
  } catch (error) {
    // Nothing is imported from a statement that cannot be read to its end: no rejects file stands for it.
    store.finishStaging();
    await rejects.close().catch(() => undefined);
    await rm(rejects.path, { force: true });
    throw error;
  }
  store.finishStaging();
  await rejects.close();
  const changes = await store.plan(rejected > 0);
  const rejectsFile = !dryRun && rejects.count > 0 ? rejects.path : null;
  if (!dryRun)
    await store.commit(changes, {
      importId,
      carrier,
      layout: layout.name,
      source: describeTable(options.source),
      importedAt: epochMsToInstant(options.nowMs),
      linesRead,
      linesRejected: rejected,
      rejectsFile,
    });
  return { ...changes, importId, dryRun, linesRead, rejected, rejectsFile, rejections };
}
