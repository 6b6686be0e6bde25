import { findJob, JOBS } from '../../jobs/job-catalog.js';
import type { JobDefinition } from '../../jobs/job-definition.js';
import type { JobRunSummary } from '../../jobs/job-run-summary.js';
import { runJob } from '../../jobs/job-runner.js';
import { UserError } from '../errors/user-error.js';
import { WAREHOUSE_BUSY_WAIT_MS } from './callback-journal-config.js';
import type { ParcelReconConfig } from './config-file.js';
import { jobNotifySettings, jobSettingsFromConfig } from './job-settings.js';
import type { createLogger } from './logger.js';
import { runClock } from './run-clock.js';
import { openWarehouseForCommand } from './warehouse-access.js';

/** What `jobs` and `schedule` share: the named jobs as the configuration file schedules and runs them. */

export const CONFIG_OPTION_HELP =
  'the configuration file (default: $PARCEL_RECON_CONFIG or ./parcel-recon.config.json)';

/** A job's schedule: the configuration's, else the job's default; null when the configuration turns it off. */
export function scheduleOf(job: JobDefinition, config: ParcelReconConfig): string | null {
  const configured = config.jobs[job.name];
  if (configured?.enabled === false) return null;
  return configured?.schedule ?? job.defaultSchedule;
}

/** Refuses schedule entries for jobs that do not exist: a typo would otherwise never run. */
export function checkJobNames(config: ParcelReconConfig, file: string | null): void {
  for (const name of Object.keys(config.jobs)) {
    if (findJob(name) === undefined)
      throw new UserError(
        `config ${file ?? ''}: jobs.${name}: no such job (known: ${JOBS.map((j) => j.name).join(', ')})`,
      );
  }
}

/** Runs one named job from the configuration, under its lock; what `jobs run` and the scheduler share. */
export async function runNamedJob(
  job: JobDefinition,
  config: ParcelReconConfig,
  env: NodeJS.ProcessEnv,
  logger: ReturnType<typeof createLogger>,
  stop: AbortSignal,
): Promise<JobRunSummary> {
  const settings = jobSettingsFromConfig(config, env, logger);
  return runJob(job, {
    settings,
    logger,
    now: runClock(env),
    stop,
    notify: jobNotifySettings(config, env),
    openWarehouse: () => openWarehouseForCommand(settings.dbPath, {}, WAREHOUSE_BUSY_WAIT_MS),
  });
}
