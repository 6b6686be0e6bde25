import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { carrierDayOf } from '../src/carriers/carrier-time.js';
import { RUN_EXIT_CODES } from '../src/errors/exit-codes.js';
import { NO_COUNTS, RunLifecycle, runStartTime } from '../src/pipeline/run-lifecycle.js';
import { dataFolder } from '../src/warehouse/data-folder.js';
import { replaceRunSummary } from '../src/warehouse/run-store.js';
import type { Warehouse } from '../src/warehouse/warehouse.js';
import { compactAndClose } from '../src/warehouse/warehouse-compaction.js';
import type { JobDefinition, JobSettings, JobStepResult } from './job-definition.js';
import { acquireJobLock } from './job-lock.js';
import { type JobNotifySettings, notifyJobNotStarted, notifyJobRun } from './job-notification.js';
import type { JobRunSummary } from './job-run-summary.js';

export interface JobRunOptions {
  readonly settings: JobSettings;
  readonly logger: Logger;
  readonly now: () => number;
  readonly stop: AbortSignal;
  readonly openWarehouse: () => Promise<Warehouse>;
  /** When and where the run's summary is sent; undefined sends nothing. */
  readonly notify?: JobNotifySettings | undefined;
}

/** A failed step fails the job; else a partial one makes it partial. */
function combinedExit(steps: readonly JobStepResult[], broke: boolean): JobRunSummary['exitState'] {
  if (broke || steps.some((s) => s.exitState === 'failed' || s.exitState === 'bad_input')) return 'failed';
  if (steps.some((s) => s.exitState === 'partial' || s.exitState === 'interrupted')) return 'partial';
  return 'ok';
}

/** Writes the file whole or not at all: a monitor never reads half a summary. */
async function writeSummaryFile(path: string, summary: unknown): Promise<void> {
  const partial = `${path}.partial`;
  try {
    await writeFile(partial, `${JSON.stringify(summary, null, 2)}\n`);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/**
 * Runs a job under its lock: a second run while one holds it fails at once with JobLockHeldError, and
 * the lock of a killed run is taken over. The run gets its own `runs` row (job = the job's name) and a
 * JSON summary under `<dataDir>/jobs/<job>/`, then a notification when the `notify` settings ask for
 * one; a job that cannot take its lock or open its warehouse has neither, but still notifies. A step
 * that throws ends the job; the summary records why and the error goes on to the caller. A job that
 * compacts the warehouse does so once it has closed it, still under its lock.
 */
export async function runJob(definition: JobDefinition, options: JobRunOptions): Promise<JobRunSummary> {
  const { settings, logger } = options;
  const lock = await notStartedIfThrows(definition, options, () =>
    acquireJobLock(dataFolder(settings.dataDir).jobLocks, definition.name, settings.timeZone),
  );
  try {
    if (lock.tookOverFrom !== null)
      logger.warn(
        { job: definition.name, stalePid: lock.tookOverFrom.pid },
        'took over the lock of a run that was killed',
      );
    const summary = await runOpenJob(definition, options);
    if (definition.compactsAfterwards?.(settings)) {
      const compaction = await compactAndClose(await options.openWarehouse());
      logger.info({ job: definition.name, jobRunId: summary.runId, ...compaction }, 'compacted the warehouse');
    }
    return summary;
  } finally {
    await lock.release();
  }
}

/** Runs what the job needs before it can start; when that throws, says so to the notify receiver, then throws. */
async function notStartedIfThrows<T>(
  definition: JobDefinition,
  options: JobRunOptions,
  prepare: () => Promise<T>,
): Promise<T> {
  try {
    return await prepare();
  } catch (error) {
    if (options.notify !== undefined)
      await notifyJobNotStarted(definition.name, error, options.notify, options.logger.child({ job: definition.name }));
    throw error;
  }
}

/** The job's run with the warehouse open: its `runs` row, its steps, its summary file and notification. */
async function runOpenJob(definition: JobDefinition, options: JobRunOptions): Promise<JobRunSummary> {
  const { settings, logger, now } = options;
  const warehouse = await notStartedIfThrows(definition, options, options.openWarehouse);
  try {
    const startedAt = runStartTime(now);
    const carrierDay = carrierDayOf(startedAt.epochMs, settings.dayUtcOffsetMinutes);
    const run = await RunLifecycle.start({
      warehouse,
      job: definition.name,
      source: `job ${definition.name}`,
      carrierDay,
      startedAt,
      dataDir: settings.dataDir,
      exitCodes: RUN_EXIT_CODES,
    });
    const { runId } = run;
    const log = logger.child({ job: definition.name, jobRunId: runId });
    log.info({ carrierDay }, 'job started');

    const steps: JobStepResult[] = [];
    let failure: unknown;
    try {
      steps.push(...(await definition.run({ runId, settings, warehouse, logger: log, now, stop: options.stop })));
    } catch (error) {
      failure = error;
    }
    const finishedAt = now();
    const exitState = combinedExit(steps, failure !== undefined);
    const exitCode = run.exitCodeOf(exitState);
    const dir = dataFolder(settings.dataDir).jobSummaries(definition.name);
    await mkdir(dir, { recursive: true });
    const summary: JobRunSummary = {
      runId,
      job: definition.name,
      carrierDay,
      ...run.timing(finishedAt),
      exitCode,
      exitState,
      counts: steps.find((s) => s.counts !== undefined)?.counts ?? NO_COUNTS,
      steps,
      error: failure === undefined ? null : failure instanceof Error ? failure.message : String(failure),
      summaryFile: join(dir, `${runId}.json`),
    };
    await run.finish(finishedAt, { counts: summary.counts, exitState, summary });
    await writeSummaryFile(summary.summaryFile, summary);
    const alerts = options.notify === undefined ? [] : await notifyJobRun(summary, options.notify, log);
    const delivered: JobRunSummary = { ...summary, alerts };
    await replaceRunSummary(warehouse, runId, delivered);
    await writeSummaryFile(summary.summaryFile, delivered);
    log.info({ exitCode, exitState, durationMs: summary.durationMs }, 'job finished');
    if (failure !== undefined) throw failure;
    return delivered;
  } finally {
    await warehouse.close();
  }
}
