import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { NotifyEvent } from '../src/settings/notify-events.js';
import type { RunCounts } from '../src/warehouse/run-store.js';
import type { AlertDelivery, JobRunSummary } from './job-run-summary.js';
import { type DeliveryPolicy, deliverJson } from './webhook-delivery.js';

/** The configuration's `notify` section, with the webhook URL read from the variable it names. */
export interface JobNotifySettings extends DeliveryPolicy {
  /** Undefined when the variable `urlEnv` names is not set. */
  readonly url: string | undefined;
  readonly urlEnv: string;
  readonly format: AlertDelivery['format'];
  readonly telegramChatId?: string | number | undefined;
  readonly on: readonly NotifyEvent[];
  readonly chargesAtStakeAbove: number;
  readonly codOutstandingAbove: number;
}

/** The part of the charges step's summary a notification reads: its figures over every account. */
const ChargesStepSummarySchema = z.object({
  figures: z.object({
    checks: z.array(
      z.object({
        check_name: z.string(),
        account_alias: z.string(),
        amount_at_stake: z.coerce.number(),
      }),
    ),
  }),
});

/** What the job's charges report flagged: the money at stake over all accounts. */
function flaggedCharges(summary: JobRunSummary): { atStake: number } | undefined {
  const step = summary.steps.find((s) => s.step === 'charges report');
  const read = ChargesStepSummarySchema.safeParse(step?.summary);
  if (!read.success) return undefined;
  const any = read.data.figures.checks.find((c) => c.check_name === 'any' && c.account_alias === '*');
  return { atStake: any?.amount_at_stake ?? 0 };
}

/** The part of the cod step's summary a notification reads: the delivered COD in no statement, whole VND. */
const CodStepSummarySchema = z.object({ figures: z.object({ outstanding: z.coerce.number() }) });

/** The money the job's cod report found outstanding: delivered COD no statement has paid. */
function outstandingCod(summary: JobRunSummary): number | undefined {
  const read = CodStepSummarySchema.safeParse(summary.steps.find((s) => s.step === 'cod report')?.summary);
  return read.success ? read.data.figures.outstanding : undefined;
}

/** The report steps whose findings a message lists, money first, and the word that introduces them. */
const MONEY_REPORT_STEPS = [
  ['charges report', 'charges'],
  ['reconcile report', 'reconcile'],
  ['cod report', 'cod'],
] as const;

/** A report step's lines: its totals, then its findings ranked by money at stake. */
function reportFindings(summary: JobRunSummary, step: string): string[] | undefined {
  const read = z
    .object({ findings: z.array(z.string()) })
    .safeParse(summary.steps.find((s) => s.step === step)?.summary);
  return read.success ? read.data.findings : undefined;
}

/** Why this run is worth a message, or nothing: how it ended, flagged charges or COD outstanding above their thresholds. */
function notificationReasons(summary: JobRunSummary, settings: JobNotifySettings): string[] {
  const reasons: string[] = [];
  if ((settings.on as readonly string[]).includes(summary.exitState)) reasons.push(summary.exitState);
  const atStake = flaggedCharges(summary)?.atStake;
  if (settings.on.includes('charges') && atStake !== undefined && atStake > settings.chargesAtStakeAbove)
    reasons.push('charges');
  const outstanding = outstandingCod(summary);
  if (settings.on.includes('cod') && outstanding !== undefined && outstanding > settings.codOutstandingAbove)
    reasons.push('cod');
  return reasons;
}

/** The tracking step's counts in one line, as the job's own output prints them. */
export function lookupCountsLine(c: RunCounts): string {
  return `codes read ${c.codesRead}, looked up ok ${c.lookedUpOk}, carrier errors ${c.carrierErrors}, failed ${c.transportErrors}, deferred ${c.deferred}, lookups spent ${c.lookupsSpent}`;
}

/** Longer than any chat shows at a glance, and under Telegram's 4,096 characters. */
const TEXT_LIMIT = 3_500;
const ERROR_LIMIT = 500;

/** The message a person reads: the job and its day, how it ended and why, its counts and flagged charges, and where the summary is. */
function notificationText(summary: JobRunSummary): string {
  const lines = [
    `parcel-recon ${summary.job} on ${hostname()}: ${summary.exitState} (exit ${summary.exitCode}), carrier day ${summary.carrierDay}, run ${summary.runId}`,
  ];
  if (summary.error !== null) lines.push(`error: ${summary.error.slice(0, ERROR_LIMIT)}`);
  for (const step of summary.steps)
    if (step.exitState !== 'ok') lines.push(`${step.step}: ${step.exitState}${step.cause ? ` (${step.cause})` : ''}`);
  lines.push(lookupCountsLine(summary.counts));
  for (const [step, label] of MONEY_REPORT_STEPS) {
    const [total, ...findings] = reportFindings(summary, step) ?? [];
    if (total !== undefined) lines.push(`${label}: ${total}`);
    lines.push(...findings.map((finding) => `  ${finding}`));
  }
  lines.push(`summary: ${summary.summaryFile}`);
  const text = lines.join('\n');
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT - 1)}…` : text;
}

/** The body in the receiver's form: Slack and other JSON receivers, strict `{text}` ones (Google Chat), or Telegram's sendMessage. */
function notificationBody(text: string, summary: unknown, settings: JobNotifySettings): unknown {
  if (settings.format === 'telegram') return { chat_id: settings.telegramChatId, text };
  if (settings.format === 'text') return { text };
  return { text, summary };
}

/** Where the message goes, as a log may name it: the host, never the path or query that carry the token. */
function receiverHost(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends the run's summary when the settings ask for it, and says how each alert went (none when the
 * run is not worth one). Every way it can fail ends in one warning line naming the receiver's host at
 * most, and never reaches the job's exit code.
 */
export async function notifyJobRun(
  summary: JobRunSummary,
  settings: JobNotifySettings,
  logger: Logger,
): Promise<AlertDelivery[]> {
  const reasons = notificationReasons(summary, settings);
  if (reasons.length === 0) return [];
  return [await sendNotification(notificationText(summary), summary, reasons, settings, logger)];
}

/** What `jobs notify --test` sends in place of a run's summary. */
export interface JobNotificationTest {
  readonly job: string;
  readonly test: true;
}

/** Sends a test message about `job` through each of its alert channels, whatever the run would warrant. */
export async function sendTestNotification(
  job: string,
  settings: JobNotifySettings,
  logger: Logger,
): Promise<AlertDelivery[]> {
  const text = `parcel-recon ${job} on ${hostname()}: test message; alerts of this job reach this channel`;
  const test: JobNotificationTest = { job, test: true };
  return [await sendNotification(text, test, ['test'], settings, logger)];
}

/** What a job that could not start tells its receiver in place of a run's summary. */
export interface JobNotStarted {
  readonly job: string;
  readonly exitState: 'failed';
  readonly started: false;
  readonly error: string;
}

/**
 * Sends word of a job that could not start, when the settings ask for failed runs: its lock held by
 * a run still going, or its warehouse that would not open. Such a job has no run and no summary
 * file, and without this its night would pass in silence.
 */
export async function notifyJobNotStarted(
  job: string,
  error: unknown,
  settings: JobNotifySettings,
  logger: Logger,
): Promise<void> {
  if (!settings.on.includes('failed')) return;
  const message = error instanceof Error ? error.message : String(error);
  const notStarted: JobNotStarted = { job, exitState: 'failed', started: false, error: message };
  const text = `parcel-recon ${job} on ${hostname()}: failed to start\nerror: ${message.slice(0, ERROR_LIMIT)}`;
  await sendNotification(text, notStarted, ['failed'], settings, logger);
}

async function sendNotification(
  text: string,
  summary: unknown,
  reasons: readonly string[],
  settings: JobNotifySettings,
  logger: Logger,
): Promise<AlertDelivery> {
  const channel = { channel: 'webhook', format: settings.format, reasons } as const;
  const notSent = (reason: string): AlertDelivery => {
    logger.warn({ urlEnv: settings.urlEnv }, `job notification not sent: ${reason}`);
    return { ...channel, receiver: null, delivered: false, attempts: 0, reason };
  };
  if (settings.url === undefined) return notSent(`${settings.urlEnv} is not set`);
  const receiver = receiverHost(settings.url);
  if (receiver === undefined) return notSent(`${settings.urlEnv} is not an http(s) URL`);
  const outcome = await deliverJson(settings.url, notificationBody(text, summary, settings), settings);
  if (outcome.delivered) {
    logger.info({ receiver, reasons, attempts: outcome.attempts }, 'job notification sent');
    return { ...channel, receiver, delivered: true, attempts: outcome.attempts, reason: null };
  }
  logger.warn(
    { receiver, reasons, attempts: outcome.attempts, reason: outcome.reason },
    `job notification not delivered: ${outcome.reason}`,
  );
  return { ...channel, receiver, delivered: false, attempts: outcome.attempts, reason: outcome.reason };
}
