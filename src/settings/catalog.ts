import { z } from 'zod';
import { CARRIER_UTC_OFFSET_MINUTES } from '../carriers/carrier-time.js';
import { DEFAULT_MAX_ANSWER_BYTES } from '../carriers/client/answer-size.js';
import { DEFAULT_CARRIER_ID, KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { DEFAULT_BREAKER_ATTEMPTS } from '../pipeline/carrier-breaker-attempts.js';
import { TRACKING_WAREHOUSE_OPTIONS } from '../pipeline/tracking/tracking-warehouse-options.js';
import { DEFAULT_OPERATION_PACE } from '../quota/operation-pace-default.js';
import { carrierLimitsText } from '../quota/quota-policy.js';
import { DEFAULT_COD_RULES } from '../reports/cod-report.js';
import { DEFAULT_DISPLAY_TIME_ZONE, isTimeZone } from '../reports/display-time.js';
import { REPORT_FORMATS } from '../reports/writers/report-formats.js';
import { layoutName, PAYOUT_CARRIERS, PayoutLayoutSchema, payoutCarrierId } from '../sources/payout-layouts.js';
import { dataFolder, defaultDataDir } from '../warehouse/data-folder.js';
import { NOTIFY_EVENTS } from './notify-events.js';
import type { SettingsCatalog, SettingsCommand } from './setting.js';
import {
  cronExpression,
  httpUrl,
  knownCarrierId,
  memoryLimitSchema,
  nonNegativeInt,
  numberText,
  positiveInt,
  retentionAge,
  shardText,
} from './value-types.js';

/** A whole number of 0 or more; anything else is `hint`. */
function wholeNumberOf(hint: string) {
  return z.number({ error: hint }).int(hint).min(0, hint);
}

/** The settings declared before a default that reads them. */
type EarlierValues = Readonly<Record<string, unknown>>;

const REDIS_URL_ENV = 'PARCEL_RECON_REDIS_URL';
/** What the sandbox expects; the carrier's interface does not say how the customer operations authenticate. */
const DEFAULT_AUTH_HEADER = 'ApiKey';

/** Every command that takes settings: each reads the configuration file the same way. */
const EVERY_COMMAND: readonly SettingsCommand[] = [
  'track',
  'price',
  'images',
  'quota',
  'sql',
  'export',
  'replay',
  'callbacks serve',
  'callbacks ingest',
  'report',
  'payouts import',
  'payouts deposits',
  'findings',
  'prune',
  'upgrade',
  'jobs',
  'config show',
];
const WAREHOUSE_COMMANDS: readonly SettingsCommand[] = EVERY_COMMAND.filter(
  (command) => command !== 'config show' && command !== 'jobs',
);
const CUSTOMER_OPERATIONS: readonly SettingsCommand[] = ['price', 'images'];

const redisUrl = z.url({ protocol: /^rediss?$/, error: 'a redis:// or rediss:// URL' });
/** A URL on a command line or in the file is read by more people and tools than the run: it holds no password. */
const redisUrlWithoutPassword = redisUrl.refine(
  (url) => !URL.canParse(url) || new URL(url).password === '',
  `the URL holds a password; give the whole URL in ${REDIS_URL_ENV} instead`,
);
/** The types of a tracking source's settings, also those of a carrier's section of `alsoTrack`. */
const sourceTypes = {
  inputs: z.array(z.string().min(1)),
  delimiter: z.enum([',', ';']),
  fromDuckdb: z.string().min(1),
  fromDatabase: z.union([z.string().min(1), z.literal(true)]),
  mysqlPasswordFile: z.string().min(1),
  query: z.string().min(1),
};

const keyAlias = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'an alias of 1 to 64 letters, digits, ., _ or -');

/** A carrier the nightly job tracks beside the configured `carrier`: its address, keys and source. */
export const AlsoTrackSchema = z.strictObject({
  carrier: knownCarrierId,
  trackingUrl: httpUrl,
  keysFile: z.string().min(1).optional(),
  source: z.strictObject({
    inputs: sourceTypes.inputs.optional(),
    delimiter: sourceTypes.delimiter.optional(),
    fromDuckdb: sourceTypes.fromDuckdb.optional(),
    fromPostgres: sourceTypes.fromDatabase.optional(),
    fromMysql: sourceTypes.fromDatabase.optional(),
    mysqlPasswordFile: sourceTypes.mysqlPasswordFile.optional(),
    query: sourceTypes.query.optional(),
  }),
});

export type AlsoTrack = z.output<typeof AlsoTrackSchema>;

const NOTIFY_URL_ENV = 'PARCEL_RECON_NOTIFY_URL';

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
    on: z.array(z.enum(NOTIFY_EVENTS)).min(1).default(['failed', 'partial', 'charges', 'cod']),
    /** VND: the charges report's money at stake over its flagged orders must exceed it for `charges` to fire. */
    chargesAtStakeAbove: z.number().min(0).default(0),
    /** VND: the cod report's money outstanding (delivered COD in no statement) must exceed it for `cod` to fire. */
    codOutstandingAbove: z.number().min(0).default(0),
    retries: z.number().int().min(0).max(10).default(3),
    /** The whole delivery, retries and their waits included. */
    timeoutMs: positiveInt.max(300_000).default(30_000),
  })
  .strict()
  .refine((notify) => notify.format !== 'telegram' || notify.telegramChatId !== undefined, {
    message: 'format "telegram" needs telegramChatId',
    path: ['telegramChatId'],
  });

const JobScheduleSchema = z
  .object({
    /** When the scheduler runs the job, in the carrier's time zone (see dayUtcOffset). */
    schedule: cronExpression.optional(),
    /** A job that is off is listed but never fired by the scheduler. */
    enabled: z.boolean().default(true),
  })
  .strict();

/**
 * Every setting of parcel-recon, each declared once. The commands' flags, the configuration file's
 * schema, the one precedence (flag, then environment, then file, then default), `config show` and
 * the tables in the docs all come from here. Settings given only once, on one command line (a
 * report's `--from`, `--json`), stay with their command.
 */
export const SETTINGS = {
  config: {
    type: z.string().min(1),
    default: 'parcel-recon.config.json',
    defaultText: './parcel-recon.config.json, when it exists',
    flag: '--config <file>',
    env: 'PARCEL_RECON_CONFIG',
    help: 'the configuration file; one named must exist',
    commands: EVERY_COMMAND,
  },
  warehouse: {
    type: z.string().min(1),
    default: 'data/recon.duckdb',
    flag: '--db <file>',
    configKey: 'warehouse',
    env: 'PARCEL_RECON_DB',
    help: 'the warehouse file',
    commands: WAREHOUSE_COMMANDS,
  },
  dataDir: {
    type: z.string().min(1),
    default: (values: EarlierValues) => defaultDataDir(values.warehouse as string),
    defaultText: "the warehouse's folder",
    flag: '--data-dir <dir>',
    configKey: 'dataDir',
    help: 'where spools, rejects, job summaries and locks go',
    commands: ['track', 'price', 'images', 'replay', 'payouts import', 'payouts deposits', 'prune'],
  },
  keysFile: {
    type: z.string().min(1),
    flag: '--keys-file <file>',
    configKey: 'keysFile',
    help: 'the API keys: JSON {alias: key} or {alias: {key, shopId}}, mode 600',
    commands: ['track', 'price', 'images', 'callbacks serve'],
  },
  apiKeys: {
    type: z.union([
      z.string().min(1),
      z.record(
        keyAlias,
        z.union([
          z.string().min(1),
          z.strictObject({
            key: z.string().min(1),
            shopId: z.union([z.string().regex(/^\d{1,20}$/), z.number().int()]),
          }),
        ]),
      ),
    ]),
    env: 'PARCEL_RECON_API_KEYS',
    configKey: 'apiKeys',
    help: 'the API keys: alias=key,... (alias:shop=key with a GHN shop) in the environment; {alias: key} or {alias: {key, shopId}} in the file, refused unless it is mode 600',
    commands: ['track', 'price', 'images', 'callbacks serve'],
    secret: true,
  },
  trackingUrl: {
    type: httpUrl,
    flag: '--tracking-url <url>',
    configKey: 'trackingUrl',
    env: 'PARCEL_RECON_TRACKING_URL',
    help: "the carrier's tracking address",
    commands: ['track'],
  },
  carrier: {
    type: knownCarrierId,
    default: DEFAULT_CARRIER_ID,
    flag: '--carrier <carrier>',
    configKey: 'carrier',
    env: 'PARCEL_RECON_CARRIER',
    help: `the carrier whose orders are looked up (${KNOWN_CARRIERS.map((c) => c.id).join(', ')}); --tracking-url is its address, and price and images ask it at --base-url`,
    commands: ['track', 'quota', ...CUSTOMER_OPERATIONS],
  },
  baseUrl: {
    type: httpUrl,
    flag: '--base-url <url>',
    configKey: 'baseUrl',
    env: 'PARCEL_RECON_BASE_URL',
    help: "the carrier's base address for the customer operations (price, images)",
    commands: CUSTOMER_OPERATIONS,
  },
  dayUtcOffset: {
    type: z.number().int().min(-720).max(840),
    fromText: numberText,
    default: CARRIER_UTC_OFFSET_MINUTES,
    flag: '--day-utc-offset <minutes>',
    configKey: 'dayUtcOffset',
    help: "UTC offset of the carrier day's midnight, in minutes (420 is UTC+07:00); also the schedules' time zone",
    commands: ['track', 'quota', 'prune'],
  },
  timeZone: {
    type: z.string().refine(isTimeZone, {
      error: (issue) => `${JSON.stringify(issue.input)} is not a time zone; give an IANA name such as Asia/Ho_Chi_Minh`,
    }),
    default: DEFAULT_DISPLAY_TIME_ZONE,
    flag: '--time-zone <zone>',
    configKey: 'timeZone',
    env: 'PARCEL_RECON_TIME_ZONE',
    help: 'the IANA time zone reports and messages show times in, as do quota and sql',
    commands: ['report', 'quota', 'sql'],
  },
  callbackJournal: {
    type: z.string().min(1),
    default: (values: EarlierValues) => dataFolder(values.dataDir as string).callbackJournal,
    defaultText: 'callbacks/ in the data folder',
    flag: '--journal-dir <dir>',
    configKey: 'callbacks.journalDir',
    env: 'PARCEL_RECON_CALLBACK_JOURNAL',
    help: "the callback receiver's journal; track and the nightly job load it first",
    commands: ['callbacks serve', 'callbacks ingest', 'track'],
  },
  'source.inputs': {
    type: sourceTypes.inputs,
    flag: '--input <file>',
    repeatable: true,
    configKey: 'source.inputs',
    help: 'CSV or .xlsx file (its first sheet) with an order_code column (and optionally account); repeatable; - reads stdin',
    commands: ['track'],
    group: 'source',
  },
  'source.delimiter': {
    type: sourceTypes.delimiter,
    defaultText: 'detected from the header',
    flag: '--delimiter <char>',
    configKey: 'source.delimiter',
    help: 'CSV delimiter, , or ;',
    commands: ['track'],
    group: 'source',
  },
  'source.fromDuckdb': {
    type: sourceTypes.fromDuckdb,
    flag: '--from-duckdb <file>',
    configKey: 'source.fromDuckdb',
    help: 'read codes from a DuckDB file with --query',
    commands: ['track'],
    group: 'source',
  },
  'source.fromPostgres': {
    type: sourceTypes.fromDatabase,
    flag: '--from-postgres [url]',
    configKey: 'source.fromPostgres',
    help: 'read codes from PostgreSQL with --query (postgres://user@host:port/db, no password: it comes from PGPASSWORD or ~/.pgpass; without a URL, the whole URL is taken from $PARCEL_RECON_POSTGRES_URL)',
    commands: ['track'],
    group: 'source',
  },
  'source.fromMysql': {
    type: sourceTypes.fromDatabase,
    flag: '--from-mysql [url]',
    configKey: 'source.fromMysql',
    help: 'read codes from MySQL or MariaDB with --query (mysql://user@host:port/db, no password: it comes from $MYSQL_PWD or --mysql-password-file; without a URL, the whole URL is taken from $PARCEL_RECON_MYSQL_URL)',
    commands: ['track'],
    group: 'source',
  },
  'source.mysqlPasswordFile': {
    type: sourceTypes.mysqlPasswordFile,
    flag: '--mysql-password-file <file>',
    configKey: 'source.mysqlPasswordFile',
    help: "the --from-mysql password, the file's first line (mode 600)",
    commands: ['track'],
    group: 'source',
  },
  'source.query': {
    type: sourceTypes.query,
    flag: '--query <sql>',
    configKey: 'source.query',
    help: 'SQL returning order_code and optionally account',
    commands: ['track'],
    group: 'source',
  },
  alsoTrack: {
    type: z.array(AlsoTrackSchema),
    default: [] as AlsoTrack[],
    configKey: 'alsoTrack',
    help: 'more carriers the nightly job tracks after `carrier`, each {carrier, trackingUrl, keysFile, source}: its own address, its keys file (mode 600; else the same keys) and source',
    commands: ['jobs'],
  },
  postgresUrl: {
    type: z.string().min(1),
    env: 'PARCEL_RECON_POSTGRES_URL',
    help: 'the whole PostgreSQL URL, password included, of a --from-postgres given without one',
    commands: ['track', 'report'],
    secret: true,
  },
  mysqlUrl: {
    type: z.string().min(1),
    env: 'PARCEL_RECON_MYSQL_URL',
    help: 'the whole MySQL URL, password included, of a --from-mysql given without one',
    commands: ['track'],
    secret: true,
  },
  mysqlPassword: {
    type: z.string(),
    env: 'MYSQL_PWD',
    help: 'the password of --from-mysql (or --mysql-password-file)',
    commands: ['track'],
    secret: true,
  },
  'track.perKeyLimit': {
    type: nonNegativeInt,
    fromText: numberText,
    defaultText: carrierLimitsText((quota) => quota.callsPerKeyPerDay),
    flag: '--per-key-limit <n>',
    configKey: 'track.perKeyLimit',
    help: 'calls per key per carrier day (a GHN lookup is two calls)',
    commands: ['track', 'quota'],
  },
  'track.globalLimit': {
    type: nonNegativeInt,
    fromText: numberText,
    defaultText: carrierLimitsText((quota) => quota.callsPerDay),
    flag: '--global-limit <n>',
    configKey: 'track.globalLimit',
    help: 'calls per carrier day over all keys',
    commands: ['track', 'quota'],
  },
  'track.reservePerKey': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 0,
    flag: '--reserve-per-key <n>',
    configKey: 'track.reservePerKey',
    help: 'calls per key left for other systems using the same keys',
    commands: ['track'],
  },
  'track.reserveGlobal': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 0,
    flag: '--reserve-global <n>',
    configKey: 'track.reserveGlobal',
    help: 'calls in total left for other systems',
    commands: ['track'],
  },
  'track.concurrency': {
    type: positiveInt.max(1024),
    fromText: numberText,
    default: 128,
    flag: '--concurrency <n>',
    configKey: 'track.concurrency',
    help: 'lookups in flight at once',
    commands: ['track'],
  },
  'track.rate': {
    type: z.number().nonnegative(),
    fromText: numberText,
    defaultText: carrierLimitsText((quota) => quota.callsPerSecond, 'no cap'),
    flag: '--rate <n>',
    configKey: 'track.rate',
    help: 'calls started per second at most, over all keys; 0 for no cap but the concurrency',
    commands: ['track'],
  },
  'track.timeoutMs': {
    type: positiveInt,
    fromText: numberText,
    default: 10_000,
    flag: '--timeout-ms <ms>',
    configKey: 'track.timeoutMs',
    help: 'time allowed for one request',
    commands: ['track'],
  },
  'track.maxAnswerBytes': {
    type: positiveInt,
    fromText: numberText,
    default: DEFAULT_MAX_ANSWER_BYTES,
    flag: '--max-answer-bytes <n>',
    configKey: 'track.maxAnswerBytes',
    help: 'the largest answer body read; a larger one is not read further and fails its lookup with LOOKUP_TOO_LARGE, not retried',
    commands: ['track'],
  },
  'track.attempts': {
    type: positiveInt.max(20),
    fromText: numberText,
    default: 5,
    flag: '--attempts <n>',
    configKey: 'track.attempts',
    help: 'attempts per order on transient failures, each counted against the quota',
    commands: ['track'],
  },
  'track.breakerAttempts': {
    type: positiveInt,
    fromText: numberText,
    default: DEFAULT_BREAKER_ATTEMPTS,
    flag: '--breaker-attempts <n>',
    configKey: 'track.breakerAttempts',
    help: 'stop sending once this many attempts in a row got no answer from the carrier (refused, reset, timed out, 5xx): the orders left are deferred and the run exits 1',
    commands: ['track'],
  },
  'track.retryMinMs': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 200,
    flag: '--retry-min-ms <ms>',
    configKey: 'track.retryMinMs',
    help: 'first backoff delay, doubled each retry, with jitter',
    commands: ['track'],
  },
  'track.retryMaxMs': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 10_000,
    flag: '--retry-max-ms <ms>',
    configKey: 'track.retryMaxMs',
    help: 'longest backoff delay',
    commands: ['track'],
  },
  'track.batchSize': {
    type: positiveInt,
    fromText: numberText,
    default: 1_000,
    flag: '--batch-size <n>',
    configKey: 'track.batchSize',
    help: 'results committed per warehouse transaction; up to 4 times as many while a commit runs',
    commands: ['track'],
  },
  'track.refreshTerminal': {
    type: z.boolean(),
    default: false,
    flag: '--refresh-terminal',
    configKey: 'track.refreshTerminal',
    help: 'look up again orders whose stored status or latest status callback is terminal (30, 28, 19, 18, 32)',
    commands: ['track'],
  },
  'track.maxLookups': {
    type: nonNegativeInt,
    fromText: numberText,
    defaultText: 'no cap',
    flag: '--max-lookups <n>',
    configKey: 'track.maxLookups',
    help: 'spend at most this many lookups in a run',
    commands: ['track'],
  },
  'track.graceMs': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 10_000,
    flag: '--grace-ms <ms>',
    configKey: 'track.graceMs',
    help: 'on SIGINT/SIGTERM, time in-flight lookups get to finish',
    commands: ['track'],
  },
  'track.memoryLimit': {
    type: memoryLimitSchema('256MB'),
    // What a batch's statements need and no more (tracking-warehouse-options.ts says why).
    default: TRACKING_WAREHOUSE_OPTIONS.memoryLimit,
    flag: '--memory-limit <size>',
    configKey: 'track.memoryLimit',
    help: "the warehouse's DuckDB memory limit while tracking; past it DuckDB spills to disk",
    commands: ['track'],
  },
  'track.redis': {
    type: redisUrl,
    whenVisible: redisUrlWithoutPassword,
    flag: '--redis <url>',
    configKey: 'track.redis',
    env: REDIS_URL_ENV,
    help: "share the quotas with other workers through this Redis: limiters in Bottleneck's clustered mode, the daily ledger in Redis (a URL with a password only in the environment)",
    commands: ['track'],
  },
  'track.shard': {
    type: shardText,
    flag: '--shard <i/n>',
    configKey: 'track.shard',
    help: 'look up only the codes whose hash modulo N is I (0-based); each worker writes its own warehouse, then `merge`',
    commands: ['track'],
  },
  'price.authHeader': {
    type: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'an HTTP header name'),
    default: DEFAULT_AUTH_HEADER,
    flag: '--auth-header <name>',
    configKey: 'price.authHeader',
    help: `the header the API key is sent in; the carrier does not document it, the sandbox expects ${DEFAULT_AUTH_HEADER}`,
    commands: CUSTOMER_OPERATIONS,
  },
  'price.rate': {
    type: z.number().positive().max(10_000),
    fromText: numberText,
    default: DEFAULT_OPERATION_PACE.requestsPerSecond,
    flag: '--rate <n>',
    configKey: 'price.rate',
    help: 'requests started per second at most (no quota is documented)',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.concurrency': {
    type: positiveInt.max(256),
    fromText: numberText,
    default: DEFAULT_OPERATION_PACE.concurrency,
    flag: '--concurrency <n>',
    configKey: 'price.concurrency',
    help: 'requests in flight at once',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.timeoutMs': {
    type: positiveInt,
    fromText: numberText,
    default: 10_000,
    flag: '--timeout-ms <ms>',
    configKey: 'price.timeoutMs',
    help: 'time allowed for one request',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.maxAnswerBytes': {
    type: positiveInt,
    fromText: numberText,
    default: DEFAULT_MAX_ANSWER_BYTES,
    flag: '--max-answer-bytes <n>',
    configKey: 'price.maxAnswerBytes',
    help: 'the largest answer body read; a larger one is not read further and fails its request with LOOKUP_TOO_LARGE, not retried',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.attempts': {
    type: positiveInt.max(20),
    fromText: numberText,
    default: 5,
    flag: '--attempts <n>',
    configKey: 'price.attempts',
    help: 'attempts per request on transient failures',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.retryMinMs': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 200,
    flag: '--retry-min-ms <ms>',
    help: 'first backoff delay, doubled each retry, with jitter',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.retryMaxMs': {
    type: nonNegativeInt,
    fromText: numberText,
    default: 10_000,
    flag: '--retry-max-ms <ms>',
    help: 'longest backoff delay',
    commands: CUSTOMER_OPERATIONS,
  },
  'price.batchSize': {
    type: positiveInt,
    fromText: numberText,
    default: 500,
    flag: '--batch-size <n>',
    help: 'results committed per warehouse transaction',
    commands: CUSTOMER_OPERATIONS,
  },
  'payouts.carrier': {
    type: payoutCarrierId,
    defaultText: `the layout's carrier, else ${DEFAULT_CARRIER_ID}`,
    flag: '--carrier <name>',
    configKey: 'payouts.carrier',
    help: `the carrier whose payout statement is imported: ${PAYOUT_CARRIERS.join(', ')}`,
    commands: ['payouts import'],
  },
  'payouts.layout': {
    type: layoutName,
    defaultText: "the carrier's template",
    flag: '--layout <name>',
    configKey: 'payouts.layout',
    help: `the statement's column layout: a carrier's template (${PAYOUT_CARRIERS.join(', ')}) or a layout of payouts.layouts`,
    commands: ['payouts import'],
  },
  'payouts.layouts': {
    type: z.record(layoutName, PayoutLayoutSchema),
    default: {},
    configKey: 'payouts.layouts',
    help: "statement layouts of the user's own, each NAME: carrier, columns (batchId, batchDate, orderCode, codCollected, netPaid, debts, lineKind, batchTotal: a header or a list of them) and fees ({header: fee type})",
    commands: ['payouts import'],
  },
  'cod.unpaidAfterDays': {
    type: wholeNumberOf('a whole number of days, such as 7').max(9999, 'a whole number of days, such as 7'),
    fromText: numberText,
    default: DEFAULT_COD_RULES.unpaidAfterDays,
    flag: '--unpaid-after-days <n>',
    configKey: 'cod.unpaidAfterDays',
    help: 'a delivered COD order in no statement this many carrier days after its delivery is a finding (report cod, findings, the cod-audit job)',
    commands: ['report cod', 'findings'],
  },
  'cod.moneyTolerance': {
    type: wholeNumberOf('whole dong, such as 0'),
    fromText: numberText,
    default: DEFAULT_COD_RULES.moneyTolerance,
    flag: '--money-tolerance <dong>',
    configKey: 'cod.moneyTolerance',
    help: 'money differences of the COD checks up to this many whole dong pass (report cod, findings, the cod-audit job)',
    commands: ['report cod', 'findings'],
  },
  'reports.outDir': {
    type: z.string().min(1),
    default: (values: EarlierValues) => dataFolder(values.dataDir as string).reports,
    defaultText: 'DATA_DIR/reports',
    configKey: 'reports.outDir',
    help: "where the jobs' reports go, a folder per job beneath it",
    commands: [],
  },
  'reports.format': {
    type: z.enum(REPORT_FORMATS),
    default: 'csv',
    configKey: 'reports.format',
    help: `the jobs' report format: ${REPORT_FORMATS.join(', ')}`,
    commands: [],
  },
  'reports.periodDays': {
    type: positiveInt.max(366),
    default: 30,
    configKey: 'reports.periodDays',
    help: "carrier days the jobs' reports cover, ending with the day of the run",
    commands: [],
  },
  'financeAudit.invoices': {
    type: z.string().min(1),
    configKey: 'financeAudit.invoices',
    help: "the partner's invoice file (CSV or .xlsx: order_code, invoiced_amount, ...), reconciled against the carrier",
    commands: [],
  },
  'financeAudit.destinations': {
    type: z.string().min(1),
    configKey: 'financeAudit.destinations',
    help: 'the destinations of the orders the finance audit quotes (order_code, ToProvinceName, ToDistrictName, ToWardName)',
    commands: [],
  },
  'retention.olderThan': {
    type: retentionAge,
    configKey: 'retention.olderThan',
    help: 'the age (whole days, 90d) of the runs whose data the nightly job prunes after tracking, as prune --older-than',
    commands: [],
  },
  'retention.compact': {
    type: z.boolean(),
    default: false,
    configKey: 'retention.compact',
    help: 'whether the nightly job compacts the warehouse once done, after pruning',
    commands: [],
  },
  'export.to': {
    type: z.string().min(1),
    configKey: 'export.to',
    help: "where the nightly job writes the warehouse's Parquet snapshot at its end, as export --to",
    commands: [],
  },
  notify: {
    type: NotifySectionSchema,
    configKey: 'notify',
    help: 'when a job run posts a message, where and how: urlEnv, format, telegramChatId, on, chargesAtStakeAbove, codOutstandingAbove, retries, timeoutMs',
    commands: [],
  },
  notifyUrl: {
    type: z.string().min(1),
    env: NOTIFY_URL_ENV,
    help: "the webhook of the jobs' alerts, unless notify.urlEnv names another variable",
    commands: ['jobs'],
    secret: true,
  },
  jobs: {
    type: z.record(z.string(), JobScheduleSchema),
    default: {},
    configKey: 'jobs',
    help: 'each job NAME: schedule (cron, in the carrier time zone) and enabled',
    commands: [],
  },
  callbackUser: {
    type: z.string().min(1),
    flag: '--basic-user <name>',
    env: 'PARCEL_RECON_CALLBACK_USER',
    help: 'the user name callbacks must carry with --auth basic',
    commands: ['callbacks serve'],
  },
  callbackPassword: {
    type: z.string().min(1),
    env: 'PARCEL_RECON_CALLBACK_PASSWORD',
    help: 'the HTTP Basic password of callbacks serve --auth basic (or --password-file)',
    commands: ['callbacks serve'],
    secret: true,
  },
  callbackToken: {
    type: z.string().min(16, 'at least 16 characters'),
    env: 'PARCEL_RECON_CALLBACK_TOKEN',
    help: 'the secret token of the address registered with a carrier that signs nothing (GHN: /ghn/webhook?token=TOKEN); unset: its webhooks are not received',
    commands: ['callbacks serve'],
    secret: true,
  },
  sandboxCallbackPassword: {
    type: z.string().min(1),
    env: 'PARCEL_RECON_SANDBOX_CALLBACK_PASSWORD',
    help: "the sandbox's HTTP Basic password for the callbacks it sends",
    commands: [],
    secret: true,
  },
  now: {
    type: z.string().min(1),
    env: 'PARCEL_RECON_NOW',
    help: 'pretend the current time is this instant (demos, tests against a sandbox whose clock was moved)',
    commands: [],
  },
} as const satisfies SettingsCatalog;

export type Settings = typeof SETTINGS;
export type SettingName = keyof Settings;
