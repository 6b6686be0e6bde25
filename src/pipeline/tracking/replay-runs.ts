import { join } from 'node:path';
import type { Logger } from 'pino';
import { answerBodyAsRead } from '../../carrier/answer-body.js';
import { checkTrackingResult } from '../../carrier/contract.js';
import { ProductError } from '../../errors/product-error.js';
import { CHARGE_AUDIT_TABLE } from '../../warehouse/charge-audit-rows.js';
import { loadLookupBatch, type SpooledSnapshot, spooledSnapshot } from '../../warehouse/snapshot-loader.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { listSpooledRuns, readRawSpoolFile, spoolFilesOfRun } from '../raw-spool.js';

export interface ReplayOptions {
  readonly warehouse: Warehouse;
  readonly dataDir: string;
  /** Runs to replay, in this order; all spooled runs, oldest first, when empty. */
  readonly runIds: readonly string[];
  /** Empty the normalized order tables first (tracking rows only), so they are rebuilt from the spools alone. */
  readonly rebuild: boolean;
  readonly logger: Logger;
}

export interface ReplaySummary {
  readonly runs: readonly {
    readonly runId: string;
    readonly files: number;
    readonly snapshots: number;
    readonly carrierErrors: number;
    readonly unreadable: number;
  }[];
  /** Always 0: replay never asks the carrier. */
  readonly lookups: 0;
}

/** A named run without a spool. */
export class UnknownSpoolError extends ProductError {
  constructor(
    readonly runId: string,
    dataDir: string,
  ) {
    super('SPOOL_NOT_FOUND', `no raw spool for run ${runId} under ${join(dataDir, 'raw')}`);
  }
}

/** The tables replay rebuilds: the orders and what the loader derives from their snapshots. */
const REBUILT_TABLES = [
  'order_changes',
  'order_charges',
  'order_statuses',
  'order_trackings',
  'orders',
  CHARGE_AUDIT_TABLE,
] as const;

/**
 * Loads the snapshots of runs' raw spools into the warehouse through the same loader as a live run,
 * one spool file (one committed batch) at a time, in the order written: the orders, their history
 * rows, the change log and the failed attempts come out as the live run made them. No lookup is
 * made. Idempotent: a snapshot is never older than the stored one it would replace, and loading the
 * same one again changes nothing.
 */
export async function replayRuns(options: ReplayOptions): Promise<ReplaySummary> {
  const { warehouse, dataDir, logger } = options;
  const runIds = options.runIds.length > 0 ? options.runIds : await listSpooledRuns(dataDir);
  for (const runId of runIds)
    if ((await spoolFilesOfRun(dataDir, runId)).length === 0) throw new UnknownSpoolError(runId, dataDir);
  if (options.rebuild) {
    await warehouse.transaction(async (sql) => {
      for (const table of REBUILT_TABLES) await sql.run(`DELETE FROM ${table}`);
      await sql.run(`DELETE FROM delivery_failures WHERE source = 'tracking'`);
    });
  }
  const runs: ReplaySummary['runs'][number][] = [];
  for (const runId of runIds) {
    const files = await spoolFilesOfRun(dataDir, runId);
    let snapshots = 0;
    let carrierErrors = 0;
    let unreadable = 0;
    for (const file of files) {
      const loaded: SpooledSnapshot[] = [];
      for (const response of await readRawSpoolFile(file.path)) {
        let decoded: unknown;
        try {
          decoded = JSON.parse(response.body);
        } catch {
          unreadable++;
          continue;
        }
        const checked = checkTrackingResult(decoded);
        if (!checked.ok) unreadable++;
        else if (checked.value.kind === 'snapshot') {
          const body = answerBodyAsRead(Buffer.from(response.body), decoded).toString('utf8');
          loaded.push(
            spooledSnapshot({
              orderCode: checked.value.snapshot.orderCode,
              body,
              accountAlias: response.accountAlias,
              seenAt: response.seenAt,
              runId,
            }),
          );
        } else carrierErrors++;
      }
      await loadLookupBatch(warehouse, { snapshots: loaded, results: [] }, join(dataDir, 'spool', `replay-${runId}`));
      snapshots += loaded.length;
    }
    logger.info({ runId, files: files.length, snapshots, carrierErrors, unreadable }, 'run replayed');
    runs.push({ runId, files: files.length, snapshots, carrierErrors, unreadable });
  }
  return { runs, lookups: 0 };
}
