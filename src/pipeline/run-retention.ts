import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { carrierDayOf, DAY_MS, epochMsToInstant } from '../carriers/carrier-time.js';
import { dataFolder } from '../warehouse/data-folder.js';
import { type PrunedRows, pruneRunRows } from '../warehouse/run-retention.js';
import type { Warehouse } from '../warehouse/warehouse.js';

export interface RetentionOptions {
  readonly warehouse: Warehouse;
  readonly dataDir: string;
  /** Runs started this many days or more before `nowMs` lose their per-run data. */
  readonly olderThanDays: number;
  readonly nowMs: number;
  /** The carrier day's UTC offset: the quota ledger's days are carrier days. */
  readonly dayUtcOffsetMinutes: number;
  /** Count what would go, change nothing. */
  readonly dryRun: boolean;
}

/**
 * The quota ledger is the only record of what was spent each day, and a few rows a day: a prune keeps
 * its carrier days back to this many days before today's, longer when the runs are kept longer.
 */
export const QUOTA_LEDGER_KEPT_DAYS = 400;

/** What a prune removed, or with a dry run would remove. */
export interface RetentionSummary {
  readonly dryRun: boolean;
  /** Runs started before this instant lose their per-run data (unfinished ones excepted). */
  readonly startedBefore: string;
  /** The first carrier day whose quota ledger is kept. */
  readonly quotaFrom: string;
  /** Finished runs started before the cut: whatever per-run data they still had went. */
  readonly runsPruned: number;
  readonly unfinishedRunsKept: number;
  readonly rows: PrunedRows;
  /** The runs' raw spool folders (`raw/RUN_ID/`). */
  readonly rawSpool: { readonly folders: number; readonly bytes: number };
  /** The runs' rejects files (`rejects/RUN_ID.csv`): the same rows as their run_inputs rejects. */
  readonly rejectsFiles: { readonly files: number; readonly bytes: number };
}

/** The bytes of the files under `path` (a file or a folder). */
async function bytesUnder(path: string): Promise<number> {
  const found = await stat(path);
  if (!found.isDirectory()) return found.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await bytesUnder(join(path, entry));
  return total;
}

/** Of the entries of `dir`, those whose name `pick` accepts, with their bytes; a missing folder has none. */
async function entriesOf(dir: string, pick: (name: string) => boolean): Promise<{ paths: string[]; bytes: number }> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const paths = names.filter(pick).map((name) => join(dir, name));
  let bytes = 0;
  for (const path of paths) bytes += await bytesUnder(path);
  return { paths, bytes };
}

/**
 * Prunes the data of the finished runs started `olderThanDays` days or more ago: their lookup_results
 * (but each order's latest) and run_inputs rows, raw spool folders and rejects files; and the quota
 * ledger's days older than QUOTA_LEDGER_KEPT_DAYS (or `olderThanDays` when longer). Orders, their
 * history, callbacks, quotes, image lists and every run's `runs` row stay. The rows go in one transaction before the files, so a
 * prune cut off midway is finished by the next one.
 */
export async function pruneRuns(options: RetentionOptions): Promise<RetentionSummary> {
  const startedBefore = epochMsToInstant(options.nowMs - options.olderThanDays * DAY_MS);
  const quotaKeptDays = Math.max(QUOTA_LEDGER_KEPT_DAYS, options.olderThanDays);
  const quotaFrom = carrierDayOf(options.nowMs - quotaKeptDays * DAY_MS, options.dayUtcOffsetMinutes);
  const plan = await pruneRunRows(options.warehouse, { startedBefore, quotaFrom }, options.dryRun);
  const pruned = new Set(plan.runIds);
  const folder = dataFolder(options.dataDir);
  const raw = await entriesOf(folder.rawSpool, (name) => pruned.has(name));
  const rejects = await entriesOf(
    folder.rejects,
    (name) => name.endsWith('.csv') && pruned.has(name.slice(0, -'.csv'.length)),
  );
  if (!options.dryRun)
    for (const path of [...raw.paths, ...rejects.paths]) await rm(path, { recursive: true, force: true });
  return {
    dryRun: options.dryRun,
    startedBefore,
    quotaFrom,
    runsPruned: plan.runIds.length,
    unfinishedRunsKept: plan.unfinishedRunsKept,
    rows: plan.rows,
    rawSpool: { folders: raw.paths.length, bytes: raw.bytes },
    rejectsFiles: { files: rejects.paths.length, bytes: rejects.bytes },
  };
}
