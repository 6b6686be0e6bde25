import { readFile, stat } from 'node:fs/promises';
import { Cron } from 'croner';
import { z } from 'zod';
import { KeyRing } from '../carrier/client/key-ring.js';
import { UserError } from '../errors/user-error.js';
import { isTimeZone } from '../reports/display-time.js';
import { REPORT_FORMATS } from '../reports/writers/report-writer.js';
import { NOTIFY_EVENTS } from '../settings/notify-events.js';
import { API_KEYS_ENV } from './api-keys-config.js';
import { RETENTION_AGE_HINT, retentionDays } from './retention-age.js';
import { redisUrlWithoutPassword, shardText } from './shared-quota-config.js';
import { memoryLimitSchema } from './tracking-memory.js';

export const CONFIG_ENV = 'PARCEL_RECON_CONFIG';
export const DEFAULT_CONFIG_FILE = 'parcel-recon.config.json';
export const NOTIFY_URL_ENV = 'PARCEL_RECON_NOTIFY_URL';

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().min(0);
const httpUrl = z.url({ protocol: /^https?$/ });

/** A cron expression (5 fields, or 6 with seconds), checked by the scheduler's own parser. */
const cronExpression = z.string().refine(
  (pattern) => {
    try {
      new Cron(pattern, { paused: true });
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a cron expression (minute hour day-of-month month day-of-week, e.g. "0 2 * * *")' },
);

/** Where a tracking job reads its order codes; the same choices as `track`'s flags. */
const TrackSourceSchema = z
  .object({
    inputs: z.array(z.string().min(1)).optional(),
    delimiter: z.enum([',', ';']).optional(),
    fromDuckdb: z.string().min(1).optional(),
    fromPostgres: z.string().min(1).optional(),
    /** A URL without password: it comes from mysqlPasswordFile (mode 600) or MYSQL_PWD. */
    fromMysql: z.string().min(1).optional(),
    mysqlPasswordFile: z.string().min(1).optional(),
    query: z.string().min(1).optional(),
  })
  .strict();

/** The tracking step's settings: `track`'s flags of the same names. */
const TrackSettingsSchema = z
  .object({
    perKeyLimit: nonNegativeInt.optional(),
    globalLimit: nonNegativeInt.optional(),
    reservePerKey: nonNegativeInt.optional(),
    reserveGlobal: nonNegativeInt.optional(),
    concurrency: positiveInt.max(1024).optional(),
    rate: z.number().positive().optional(),
    timeoutMs: positiveInt.optional(),
    maxAnswerBytes: positiveInt.optional(),
    attempts: positiveInt.max(20).optional(),
    breakerAttempts: positiveInt.optional(),
    retryMinMs: nonNegativeInt.optional(),
    retryMaxMs: nonNegativeInt.optional(),
    batchSize: positiveInt.optional(),
    refreshTerminal: z.boolean().optional(),
    maxLookups: nonNegativeInt.optional(),
    graceMs: nonNegativeInt.optional(),
    memoryLimit: memoryLimitSchema('256MB').optional(),
    /** One worker of several: the Redis they share the quota through (no password) and this worker's shard. */
    redis: redisUrlWithoutPassword.optional(),
    shard: shardText.optional(),
  })
  .strict();

const JobScheduleSchema = z
  .object({
    /** When the scheduler runs the job, in the carrier's time zone (see dayUtcOffset). */
    schedule: cronExpression.optional(),
    /** A job that is off is listed but never fired by the scheduler. */
    enabled: z.boolean().default(true),
  })
  .strict();

/**
 * When and how a job run's summary is sent. The webhook URL carries the receiver's token, so it never
 * sits in the file: `urlEnv` names the environment variable that holds it.
 */
export const NotifySectionSchema = z
  .object({
    urlEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable')
      .default(NOTIFY_URL_ENV),
    format: z.enum(['json', 'text', 'telegram']).default('json'),
    telegramChatId: z.union([z.string().min(1), z.number().int()]).optional(),
    on: z.array(z.enum(NOTIFY_EVENTS)).min(1).default(['failed', 'partial', 'charges']),
    /** VND: the charges report's money at stake over its flagged orders must exceed it for `charges` to fire. */
    chargesAtStakeAbove: z.number().min(0).default(0),
    retries: z.number().int().min(0).max(10).default(3),
    /** The whole delivery, retries and their waits included. */
    timeoutMs: positiveInt.max(300_000).default(30_000),
  })
  .strict()
  .refine((notify) => notify.format !== 'telegram' || notify.telegramChatId !== undefined, {
    message: 'format "telegram" needs telegramChatId',
    path: ['telegramChatId'],
  });

/**
 * The configuration file: every field optional, unknown fields refused, so a typo is an error and
 * not a setting silently ignored. Environment variables override what it says.
 */
export const ConfigFileSchema = z
  .object({
    /** The warehouse file. */
    warehouse: z.string().min(1).optional(),
    /** Where spools, rejects, job summaries and locks go (default: the warehouse's folder). */
    dataDir: z.string().min(1).optional(),
    trackingUrl: httpUrl.optional(),
    baseUrl: httpUrl.optional(),
    /** JSON {alias: key}, mode 600. */
    keysFile: z.string().min(1).optional(),
    /** Keys inside the configuration: accepted only when the file itself is private (mode 600). */
    apiKeys: z
      .record(
        z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'an alias of 1 to 64 letters, digits, ., _ or -'),
        z.string().min(1),
      )
      .optional(),
    /** UTC offset of the carrier day's midnight, in minutes; also the scheduler's time zone. */
    dayUtcOffset: z.number().int().min(-720).max(840).default(420),
    /** The time zone reports and messages show times in (an IANA name, default Asia/Ho_Chi_Minh); $PARCEL_RECON_TIME_ZONE overrides it. */
    timeZone: z.string().refine(isTimeZone, { message: 'an IANA time zone, such as Asia/Ho_Chi_Minh' }).optional(),
    source: TrackSourceSchema.optional(),
    track: TrackSettingsSchema.default({}),
    reports: z
      .object({
        outDir: z.string().min(1).optional(),
        format: z.enum(REPORT_FORMATS).default('csv'),
        /** Carrier days the jobs' reports cover, ending with the day of the run. */
        periodDays: positiveInt.max(366).default(30),
      })
      .strict()
      .default({ format: 'csv', periodDays: 30 }),
    /** The price operation's settings (the finance audit's quotes): `price`'s flags of the same names. */
    price: z
      .object({
        authHeader: z.string().min(1).optional(),
        rate: z.number().positive().optional(),
        concurrency: positiveInt.max(256).optional(),
        timeoutMs: positiveInt.optional(),
        maxAnswerBytes: positiveInt.optional(),
        attempts: positiveInt.max(20).optional(),
      })
      .strict()
      .default({}),
    callbacks: z
      .object({
        /** The receiver's journal; the nightly job ingests it when it exists. */
        journalDir: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
    financeAudit: z
      .object({
        /** The partner's invoice CSV (order_code, invoiced_amount, ...), reconciled against the carrier. */
        invoices: z.string().min(1).optional(),
        /** Destinations for the quotes of delivered orders (order_code, ToProvinceName, ...). */
        destinations: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
    /** What the nightly job prunes after its tracking step, as `prune --older-than` (and `--compact`) would. */
    retention: z
      .object({
        olderThan: z.string().refine((age) => retentionDays(age) !== undefined, { message: RETENTION_AGE_HINT }),
        compact: z.boolean().default(false),
      })
      .strict()
      .optional(),
    notify: NotifySectionSchema.optional(),
    /** Where the nightly job writes the warehouse's Parquet snapshot at its end, as `export --to` would. */
    export: z
      .object({ to: z.string().min(1) })
      .strict()
      .optional(),
    jobs: z.record(z.string(), JobScheduleSchema).default({}),
  })
  .strict();

export type ParcelReconConfig = z.output<typeof ConfigFileSchema>;

/** A zod issue path as a person writes it: `jobs.nightly.schedule`, `source.inputs[0]`. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

function describeConfigIssue(file: string, issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length === 0 ? '' : `${fieldPath(issue.path)}.`;
    return `config ${file}: unknown field ${issue.keys.map((key) => `${where}${key}`).join(', ')}`;
  }
  return `config ${file}: ${fieldPath(issue.path) || '(top level)'}: ${issue.message}`;
}

/** Checks a decoded configuration; the first problem is one line naming its field. */
export function parseConfig(value: unknown, file: string): ParcelReconConfig {
  const checked = ConfigFileSchema.safeParse(value);
  if (!checked.success) throw new UserError(describeConfigIssue(file, checked.error.issues[0]!));
  return checked.data;
}

/**
 * Reads the configuration file: the one named, else $PARCEL_RECON_CONFIG, else
 * parcel-recon.config.json in the working folder. A file that was not named and does not exist is
 * an empty configuration; a named one must exist.
 */
export async function loadConfig(
  named: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<{ config: ParcelReconConfig; file: string | null }> {
  const file = named ?? env[CONFIG_ENV] ?? DEFAULT_CONFIG_FILE;
  const mustExist = named !== undefined || env[CONFIG_ENV] !== undefined;
  let text: string;
  let mode: number;
  try {
    mode = (await stat(file)).mode;
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !mustExist) return { config: parseConfig({}, file), file: null };
    throw new UserError(`cannot read config ${file}: ${code ?? 'error'}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`config ${file} is not JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const config = parseConfig(value, file);
  if (config.apiKeys !== undefined && (mode & 0o077) !== 0) {
    throw new UserError(
      `config ${file} holds apiKeys and can be read by other users (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${file}, or move the keys to a keys file or ${API_KEYS_ENV}`,
    );
  }
  return { config, file };
}

/** The keys a configuration itself holds, for when neither the environment nor a keys file gives them. */
export function configKeyRing(config: ParcelReconConfig): KeyRing | undefined {
  return config.apiKeys === undefined ? undefined : new KeyRing(Object.entries(config.apiKeys));
}
