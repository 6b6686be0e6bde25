import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { answerBodyAsRead } from '../../carriers/answer-body.js';
import type { CarrierDefinition } from '../../carriers/carrier-definition.js';
import { DEFAULT_CARRIER_ID, findCarrier } from '../../carriers/known-carriers.js';
import { ProductError } from '../../errors/product-error.js';
import { dataFolder, REBUILD_FOLDER } from '../../warehouse/data-folder.js';
import {
  discardOrderRebuildPlan,
  type OrderRebuildPlan,
  planOrderRebuild,
  swapRebuiltOrders,
  withRebuildSource,
} from '../../warehouse/order-rebuild.js';
import { isProcessAlive } from '../../warehouse/process-liveness.js';
import {
  type LookupBatch,
  type LookupResultRow,
  loadLookupBatch,
  type SpooledSnapshot,
  spooledSnapshot,
} from '../../warehouse/snapshot-loader.js';
import { Warehouse } from '../../warehouse/warehouse.js';
import { firstLineOf } from '../../warehouse/warehouse-errors.js';
import { listSpooledRuns, readRawSpoolFile, spoolFilesOfRun } from '../raw-spool.js';

export interface ReplayOptions {
  readonly warehouse: Warehouse;
  readonly dataDir: string;
  /** Runs to replay, in this order; all spooled runs, oldest first, when empty. */
  readonly runIds: readonly string[];
  /**
   * Rebuild the orders from the spools alone: their rows are built beside the stored ones and
   * swapped in, in one transaction, for the orders whose every spooled answer was read.
   */
  readonly rebuild: boolean;
  /** Read the spools and tell what would be loaded or rebuilt; the warehouse may be open read-only. */
  readonly dryRun?: boolean;
  readonly logger: Logger;
}

/** A spool file that could not be read whole: none of its answers was used. */
export interface UnreadableSpoolFile {
  readonly path: string;
  readonly cause: string;
}

export interface ReplaySummary {
  readonly dryRun: boolean;
  readonly runs: readonly {
    readonly runId: string;
    readonly files: number;
    readonly snapshots: number;
    readonly carrierErrors: number;
    /** Answers the contract could not read. */
    readonly unreadable: number;
  }[];
  readonly unreadableFiles: readonly UnreadableSpoolFile[];
  /** With rebuild: the orders replaced and those kept as they were. */
  readonly rebuild: OrderRebuildPlan | null;
  /** Always 0: replay never asks the carrier. */
  readonly lookups: 0;
}

/** A named run without a spool. */
export class UnknownSpoolError extends ProductError {
  constructor(
    readonly runId: string,
    dataDir: string,
  ) {
    super('SPOOL_NOT_FOUND', `no raw spool for run ${runId} under ${dataFolder(dataDir).rawSpool}`);
  }
}

/** Where a rebuild builds its rows: a warehouse file of its own under the data folder's spool, removed after. */
export function rebuildWarehousePath(dataDir: string): string {
  return join(dataFolder(dataDir).rebuildFolder(process.pid), 'rebuild.duckdb');
}

/** Removes the rebuild folders that replays killed before they ended left in the data folder's spool. */
async function removeAbandonedRebuilds(dataDir: string): Promise<void> {
  const { spool } = dataFolder(dataDir);
  const names = await readdir(spool).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(REBUILD_FOLDER.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !isProcessAlive(pid))
      await rm(join(spool, name), { recursive: true, force: true });
  }
}

/** The files a read-only warehouse must be let read to attach the rebuild warehouse. */
export function rebuildWarehouseFiles(dataDir: string): string[] {
  const path = rebuildWarehousePath(dataDir);
  return [path, `${path}.wal`];
}

/**
 * The carrier of a spooled run, whose definition reads its answers: that of the run's lookups or
 * input rows in the warehouse (a run looks up one carrier's orders), or, for a run it holds neither
 * of, the carrier of a warehouse that knew no carriers.
 */
async function carrierOfRun(warehouse: Warehouse, runId: string): Promise<CarrierDefinition> {
  const reader = await warehouse.readAll(
    `SELECT carrier FROM (
       (SELECT carrier FROM lookup_results WHERE run_id = $runId LIMIT 1)
       UNION ALL (SELECT carrier FROM run_inputs WHERE run_id = $runId LIMIT 1)
     ) LIMIT 1`,
    { runId },
  );
  const id = (reader.getRowObjectsJS()[0]?.carrier as string | undefined) ?? DEFAULT_CARRIER_ID;
  const carrier = findCarrier(id);
  if (carrier === undefined)
    throw new RangeError(`run ${runId} is of carrier ${id}, which this parcel-recon does not know`);
  return carrier;
}

/** The answers of one spool file: its snapshots and counts, or why it could not be read. */
type SpoolFileAnswers =
  | {
      readonly snapshots: SpooledSnapshot[];
      /** Each snapshot as a lookup_results row of its run: what a rebuild compares the stored lookups with. */
      readonly lookups: LookupResultRow[];
      readonly carrierErrors: number;
      readonly unreadable: number;
    }
  | { readonly cause: string };

async function readSpoolFileAnswers(
  path: string,
  runId: string,
  carrier: CarrierDefinition,
): Promise<SpoolFileAnswers> {
  let responses: Awaited<ReturnType<typeof readRawSpoolFile>>;
  try {
    responses = await readRawSpoolFile(path);
  } catch (error) {
    return { cause: firstLineOf(error) };
  }
  const snapshots: SpooledSnapshot[] = [];
  const lookups: LookupResultRow[] = [];
  let carrierErrors = 0;
  let unreadable = 0;
  for (const response of responses) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(response.body);
    } catch {
      unreadable++;
      continue;
    }
    const answer = carrier.tracking.spooled(decoded);
    if (answer.kind === 'unreadable') unreadable++;
    else if (answer.kind === 'snapshot') {
      const body = answerBodyAsRead(Buffer.from(response.body), decoded).toString('utf8');
      const { orderCode } = answer;
      const { accountAlias, seenAt } = response;
      snapshots.push(spooledSnapshot({ orderCode, body, accountAlias, seenAt, runId }));
      lookups.push({
        runId,
        orderCode,
        accountAlias,
        outcome: 'ok',
        errorCode: null,
        errorMessage: null,
        attempts: 1,
        origin: null,
        finishedAt: seenAt,
      });
    } else carrierErrors++;
  }
  return { snapshots, lookups, carrierErrors, unreadable };
}

/**
 * Reads the runs' spool files in the order written and hands each whole file's snapshots to `load`.
 * A file that cannot be read whole (torn, unreadable) is left out and named in the summary.
 */
async function readRuns(
  options: ReplayOptions,
  runIds: readonly string[],
  load: (batch: LookupBatch, runId: string) => Promise<void>,
): Promise<Pick<ReplaySummary, 'runs' | 'unreadableFiles'>> {
  const { dataDir, logger } = options;
  const runs: ReplaySummary['runs'][number][] = [];
  const unreadableFiles: UnreadableSpoolFile[] = [];
  for (const runId of runIds) {
    const carrier = await carrierOfRun(options.warehouse, runId);
    const files = await spoolFilesOfRun(dataDir, runId);
    let snapshots = 0;
    let carrierErrors = 0;
    let unreadable = 0;
    for (const file of files) {
      const answers = await readSpoolFileAnswers(file.path, runId, carrier);
      if ('cause' in answers) {
        logger.warn({ runId, file: file.path, cause: answers.cause }, 'spool file unreadable, not replayed');
        unreadableFiles.push({ path: file.path, cause: answers.cause });
        continue;
      }
      await load({ snapshots: answers.snapshots, results: answers.lookups, carrier: carrier.id }, runId);
      snapshots += answers.snapshots.length;
      carrierErrors += answers.carrierErrors;
      unreadable += answers.unreadable;
    }
    logger.info({ runId, files: files.length, snapshots, carrierErrors, unreadable }, 'run replayed');
    runs.push({ runId, files: files.length, snapshots, carrierErrors, unreadable });
  }
  return { runs, unreadableFiles };
}

/**
 * Loads the snapshots of runs' raw spools into the warehouse through the same loader as a live run,
 * one spool file (one committed batch) at a time, in the order written: the orders, their history
 * rows, the change log and the failed attempts come out as the live run made them. No lookup is
 * made. Idempotent: a snapshot is never older than the stored one it would replace, and loading the
 * same one again changes nothing.
 *
 * A rebuild loads them into a warehouse of its own instead, then swaps the rebuilt orders in, in one
 * transaction, for the orders whose every spooled answer was read (planOrderRebuild); the others,
 * whose spool was pruned or cannot be read, keep their rows.
 */
export async function replayRuns(options: ReplayOptions): Promise<ReplaySummary> {
  const { warehouse, dataDir } = options;
  const dryRun = options.dryRun ?? false;
  const runIds = options.runIds.length > 0 ? options.runIds : await listSpooledRuns(dataDir);
  for (const runId of runIds)
    if ((await spoolFilesOfRun(dataDir, runId)).length === 0) throw new UnknownSpoolError(runId, dataDir);
  if (options.rebuild) return rebuildFromSpools(options, runIds, dryRun);
  const read = await readRuns(options, runIds, async ({ snapshots, carrier }, runId) => {
    if (!dryRun)
      await loadLookupBatch(warehouse, { snapshots, results: [], carrier }, dataFolder(dataDir).replaySpool(runId));
  });
  return { dryRun, ...read, rebuild: null, lookups: 0 };
}

async function rebuildFromSpools(
  options: ReplayOptions,
  runIds: readonly string[],
  dryRun: boolean,
): Promise<ReplaySummary> {
  const { warehouse } = options;
  const path = rebuildWarehousePath(options.dataDir);
  const folder = join(path, '..');
  await removeAbandonedRebuilds(options.dataDir);
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  try {
    const rebuilt = await Warehouse.open(path);
    let read: Pick<ReplaySummary, 'runs' | 'unreadableFiles'>;
    try {
      read = await readRuns(options, runIds, (batch) => loadLookupBatch(rebuilt, batch, join(folder, 'spool')));
    } finally {
      await rebuilt.close();
    }
    const plan = await withRebuildSource(warehouse, path, () =>
      dryRun
        ? warehouse.exclusive(async (sql) => {
            const planned = await planOrderRebuild(sql);
            await discardOrderRebuildPlan(sql);
            return planned;
          })
        : warehouse.transaction(async (sql) => {
            const planned = await planOrderRebuild(sql);
            await swapRebuiltOrders(sql);
            return planned;
          }),
    );
    options.logger.info({ ...plan, dryRun }, dryRun ? 'rebuild planned' : 'orders rebuilt');
    return { dryRun, ...read, rebuild: plan, lookups: 0 };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
