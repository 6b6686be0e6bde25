import { Command } from 'commander';
import { z } from 'zod';
import { findJob, JOBS } from '../../../jobs/job-catalog.js';
import { realClock, runSchedule, type ScheduledJob } from '../../../jobs/job-scheduler.js';
import { formatCarrierDateTime } from '../../carriers/carrier-time.js';
import { UserError } from '../../errors/user-error.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { failureLine, productErrorOf } from '../failure-advice.js';
import { createLogger, type LogLevel, logLevelOption } from '../logger.js';
import { jobsSettings, runNamedJob, scheduleOf } from '../named-jobs.js';
import { runClock } from '../run-clock.js';
import { stopOnSignals } from '../stop-signals.js';

/** Runs the jobs on their cron schedules, for hosts without cron. */
export function scheduleCommand(): Command {
  const command = new Command('schedule').description(
    "Run the enabled jobs at their cron times in the carrier's time zone until stopped (SIGINT/SIGTERM), for hosts without cron.",
  );
  return withSettingOptions(command, 'jobs', SETTINGS)
    .option('--max-runs <n>', 'stop after this many job runs')
    .addOption(logLevelOption())
    .action(async (flags: { maxRuns?: string; logLevel?: LogLevel }) => {
      const maxRuns =
        flags.maxRuns === undefined ? undefined : z.coerce.number().int().positive().safeParse(flags.maxRuns);
      if (maxRuns !== undefined && !maxRuns.success) throw new UserError('--max-runs: a positive whole number');
      const settings = await jobsSettings(flags);
      const logger = createLogger({ level: flags.logLevel });
      const scheduled: ScheduledJob[] = JOBS.flatMap((job) => {
        const schedule = scheduleOf(job, settings.values.jobs);
        return schedule === null ? [] : [{ job: job.name, schedule }];
      });
      if (scheduled.length === 0)
        throw new UserError('every job is turned off in the configuration: nothing to schedule');
      const signals = stopOnSignals();
      try {
        const firings = await runSchedule({
          jobs: scheduled,
          utcOffsetMinutes: settings.values.dayUtcOffset,
          clock: realClock(runClock(process.env)),
          stop: signals.signal,
          maxFirings: maxRuns?.data,
          onPlanned: (job, at) => logger.info({ job, at: formatCarrierDateTime(at) }, 'job planned'),
          fire: async (name, scheduledAt) => {
            logger.info({ job: name, scheduledAt: formatCarrierDateTime(scheduledAt) }, 'job firing');
            try {
              const summary = await runNamedJob(findJob(name)!, settings, process.env, logger, signals.signal);
              logger.info({ job: name, exitCode: summary.exitCode, summaryFile: summary.summaryFile }, 'job done');
            } catch (error) {
              // One job's failure is its own summary's business; the scheduler goes on to the next time.
              const failure = productErrorOf(error);
              const message = failure
                ? failureLine(failure, 'job')
                : error instanceof Error
                  ? error.message
                  : String(error);
              logger.error({ job: name, error: message }, 'job failed');
            }
          },
        });
        logger.info({ firings }, 'scheduler stopped');
      } finally {
        signals.dispose();
      }
    });
}
