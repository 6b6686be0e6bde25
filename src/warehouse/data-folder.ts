import { dirname, join, resolve } from 'node:path';

/**
 * The data folder's layout (DATA_DIR: `--data-dir`, a job's `dataDir`, by default the warehouse's
 * folder): every path the product keeps in it is named here, and every module that reads or writes
 * one asks here. docs/architecture.md ("The data folder") describes each.
 */

/** The data folder when none is given: the warehouse's own folder. */
export function defaultDataDir(dbPath: string): string {
  return dirname(dbPath);
}

const REBUILD_PREFIX = 'replay-rebuild-';

/** A replay --rebuild's folder under the spool, named after the process that builds in it. */
export const REBUILD_FOLDER = new RegExp(`^${REBUILD_PREFIX}(\\d+)$`);

export interface DataFolder {
  /** Runs' scratch folders and the staging files of loads. */
  readonly spool: string;
  /** A run's scratch folder: its batches, answers, work list and staged rows; removed when the run finishes. */
  readonly runScratch: (runId: string) => string;
  /** The staging files of callback loads. */
  readonly callbackSpool: string;
  /** The staging files of a replay of one run. */
  readonly replaySpool: (runId: string) => string;
  /** Where `replay --rebuild` builds its rows (absolute: a read-only warehouse is let read exactly this path). */
  readonly rebuildFolder: (pid: number) => string;
  /** The raw spool: a folder per tracking run of every answer body it received. */
  readonly rawSpool: string;
  readonly rawSpoolOfRun: (runId: string) => string;
  /** A file per run of its rejected input rows. */
  readonly rejects: string;
  readonly rejectsFile: (runId: string) => string;
  /** The callback receiver's journal, unless one is named (`--journal-dir`, a job's `callbacks.journalDir`). */
  readonly callbackJournal: string;
  /** A job's run summaries. */
  readonly jobSummaries: (job: string) => string;
  /** The running jobs' locks. */
  readonly jobLocks: string;
  /** The jobs' reports (a folder per job beneath it), unless a job's `reports.outDir` names another. */
  readonly reports: string;
}

export function dataFolder(dataDir: string): DataFolder {
  const spool = join(dataDir, 'spool');
  const rawSpool = join(dataDir, 'raw');
  const rejects = join(dataDir, 'rejects');
  return {
    spool,
    runScratch: (runId) => join(spool, runId),
    callbackSpool: join(spool, 'callbacks'),
    replaySpool: (runId) => join(spool, `replay-${runId}`),
    rebuildFolder: (pid) => resolve(spool, `${REBUILD_PREFIX}${pid}`),
    rawSpool,
    rawSpoolOfRun: (runId) => join(rawSpool, runId),
    rejects,
    rejectsFile: (runId) => join(rejects, `${runId}.csv`),
    callbackJournal: join(dataDir, 'callbacks'),
    jobSummaries: (job) => join(dataDir, 'jobs', job),
    jobLocks: join(dataDir, 'locks'),
    reports: join(dataDir, 'reports'),
  };
}
