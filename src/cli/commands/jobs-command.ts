import { Command } from 'commander';
import { findJob, JOBS } from '../../../jobs/job-catalog.js';
import type { JobDefinition } from '../../../jobs/job-definition.js';
import { lookupCountsLine, sendTestNotification } from '../../../jobs/job-notification.js';
import type { AlertDelivery, JobRunSummary } from '../../../jobs/job-run-summary.js';
import { nextFireTime } from '../../../jobs/job-scheduler.js';
import { formatCarrierDateTime } from '../../carriers/carrier-time.js';
import { EXIT } from '../../errors/exit-codes.js';
import { UserError } from '../../errors/user-error.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { jobNotifySettings } from '../job-settings.js';
import { createLogger, type LogLevel, logLevelOption } from '../logger.js';
import { jobsSettings, runNamedJob, scheduleOf } from '../named-jobs.js';
import { runClock } from '../run-clock.js';
import { stopOnSignals } from '../stop-signals.js';

/** An alert's delivery in one line: its channel and receiver, and whether it got there. */
export function alertDeliveryLine(alert: AlertDelivery): string {
  const where = `${alert.channel} (${alert.format})${alert.receiver === null ? '' : ` ${alert.receiver}`}`;
  const attempts = `${alert.attempts} attempt${alert.attempts === 1 ? '' : 's'}`;
  return alert.delivered
    ? `${where}: delivered (${attempts})`
    : `${where}: not delivered: ${alert.reason} (${attempts})`;
}

function findNamedJob(name: string): JobDefinition {
  const job = findJob(name);
  if (job === undefined) throw new UserError(`no job ${name} (known: ${JOBS.map((j) => j.name).join(', ')})`);
  return job;
}

function describeJobRun(summary: JobRunSummary): string {
  const lines = [
    `job ${summary.job} run ${summary.runId}: ${summary.exitState} (exit ${summary.exitCode}), carrier day ${summary.carrierDay}, ${summary.durationMs} ms`,
  ];
  for (const step of summary.steps) {
    lines.push(`  ${step.step}: exit ${step.exitCode}${step.cause ? `, ${step.cause}` : ''}`);
    // A report step's totals and findings, ranked by money at stake.
    const findings = (step.summary as { findings?: unknown } | undefined)?.findings;
    if (Array.isArray(findings)) for (const line of findings) lines.push(`    ${String(line)}`);
  }
  lines.push(`  ${lookupCountsLine(summary.counts)}`);
  for (const alert of summary.alerts ?? []) lines.push(`  alert ${alertDeliveryLine(alert)}`);
  lines.push(`  summary ${summary.summaryFile}`);
  return `${lines.join('\n')}\n`;
}

export function jobsCommand(): Command {
  const jobs = new Command('jobs')
    .description('The named jobs (nightly reconciliation, ...): list them, run one, or test its alerts.')
    .exitOverride();
  withSettingOptions(
    jobs.command('list').description('List the jobs with their schedules (carrier time zone) and next run.'),
    'jobs',
    SETTINGS,
  )
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      const settings = await jobsSettings(flags);
      const now = runClock(process.env)();
      const rows = JOBS.map((job) => {
        const schedule = scheduleOf(job, settings.values.jobs);
        const next = schedule === null ? null : nextFireTime(schedule, settings.values.dayUtcOffset, now);
        return {
          name: job.name,
          description: job.description,
          schedule,
          enabled: schedule !== null,
          nextRun: next === null ? null : formatCarrierDateTime(next),
        };
      });
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return;
      }
      for (const row of rows) {
        process.stdout.write(
          `${row.name.padEnd(16)} ${(row.schedule ?? 'off').padEnd(16)} next ${row.nextRun ?? '-'}  ${row.description}\n`,
        );
      }
    });
  withSettingOptions(
    jobs
      .command('run')
      .description('Run one job now, under its lock.')
      .argument('<name>', `the job: ${JOBS.map((j) => j.name).join(', ')}`),
    'jobs',
    SETTINGS,
  )
    .option('--json', 'print the summary as JSON')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      '\nExit codes: those of track (0, 1, 2, 3, 4), and 5 when a run of the same job still holds its lock.',
    )
    .action(async (name: string, flags: { json?: boolean; logLevel?: LogLevel }) => {
      const job = findNamedJob(name);
      const settings = await jobsSettings(flags);
      const logger = createLogger({ level: flags.logLevel });
      const signals = stopOnSignals();
      try {
        const summary = await runNamedJob(job, settings, process.env, logger, signals.signal);
        process.stdout.write(flags.json ? `${JSON.stringify(summary)}\n` : describeJobRun(summary));
        process.exitCode = summary.exitCode;
      } finally {
        signals.dispose();
      }
    });
  withSettingOptions(
    jobs
      .command('notify')
      .description("Send a test message through the job's alert channels and say whether each delivered it.")
      .argument('<name>', `the job: ${JOBS.map((j) => j.name).join(', ')}`)
      .requiredOption('--test', 'send a test message (the only message this command sends)'),
    'jobs',
    SETTINGS,
  )
    .option('--json', 'print each delivery as JSON')
    .addOption(logLevelOption('error'))
    .addHelpText(
      'after',
      '\nExit codes: 0 delivered to at least one channel; 1 delivered to none; 2 bad input or no channel.',
    )
    .action(async (name: string, flags: { json?: boolean; logLevel?: LogLevel }) => {
      const job = findNamedJob(name);
      const notify = jobNotifySettings(await jobsSettings(flags), process.env);
      if (notify === undefined)
        throw new UserError(`no alert channel: set ${SETTINGS.notifyUrl.env} or the configuration's notify section`);
      const alerts = await sendTestNotification(job.name, notify, createLogger({ level: flags.logLevel ?? 'error' }));
      process.stdout.write(
        flags.json ? `${JSON.stringify(alerts)}\n` : `${alerts.map((alert) => alertDeliveryLine(alert)).join('\n')}\n`,
      );
      process.exitCode = alerts.some((alert) => alert.delivered) ? EXIT.OK : EXIT.FAILURE;
    });
  return jobs;
}
