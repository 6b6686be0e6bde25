import { findJob, JOBS } from '../../jobs/job-catalog.js';
import type { JobDefinition } from '../../jobs/job-definition.js';
import type { JobRunSummary } from '../../jobs/job-run-summary.js';
import { runJob } from '../../jobs/job-runner.js';
import { UserError } from '../errors/user-error.js';
import type { Settings } from '../settings/catalog.js';
import { loadSettings } from '../settings/load-settings.js';
import type { ResolvedSettings } from '../settings/resolve-settings.js';
import type { SettingValues } from '../settings/setting.js';
import { jobNotifySettings, jobSettings } from './job-settings.js';
import type { createLogger } from './logger.js';
import { runClock } from './run-clock.js';
import { openWarehouseForCommand } from './warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from './warehouse-busy-wait.js';

/** What `jobs` and `schedule` share: the named jobs as the configuration file schedules and runs them. */

/** A job's schedule: the configuration's, else the job's default; null when the configuration turns it off. */
export function scheduleOf(job: JobDefinition, jobs: SettingValues<Settings>['jobs']): string | null {
  const configured = jobs[job.name];
  if (configured?.enabled === false) return null;
  return configured?.schedule ?? job.defaultSchedule;
}

/** The named jobs' settings, with the schedule entries of jobs that do not exist refused: a typo would otherwise never run. */
export async function jobsSettings(flags: object): Promise<ResolvedSettings<Settings>> {
  const settings = await loadSettings('jobs', flags, process.env);
  const origin = settings.origins.jobs;
  for (const name of Object.keys(settings.values.jobs)) {
    if (findJob(name) === undefined)
      throw new UserError(
        `config ${origin.kind === 'file' ? origin.file : ''}: jobs.${name}: no such job (known: ${JOBS.map((j) => j.name).join(', ')})`,
      );
  }
  return settings;
}

/** Runs one named job from the configuration, under its lock; what `jobs run` and the scheduler share. */
export async function runNamedJob(
  job: JobDefinition,
  resolved: ResolvedSettings<Settings>,
  env: NodeJS.ProcessEnv,
  logger: ReturnType<typeof createLogger>,
  stop: AbortSignal,
): Promise<JobRunSummary> {
  const settings = jobSettings(resolved, env, logger);
  return runJob(job, {
    settings,
    logger,
    now: runClock(env),
    stop,
    notify: jobNotifySettings(resolved, env),
    openWarehouse: () => openWarehouseForCommand(settings.dbPath, {}, WAREHOUSE_BUSY_WAIT_MS),
  });
}
