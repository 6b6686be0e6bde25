import { Command, Option } from 'commander';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ingestCallbackJournalAsGuest } from '../../callbacks/journal-ingest.js';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../carrier/client/carrier-request.js';
import type { KeyRing } from '../../carrier/client/key-ring.js';
import { EXIT, RUN_EXIT_CODES } from '../../errors/exit-codes.js';
import { UserError } from '../../errors/user-error.js';
import { DEFAULT_BREAKER_ATTEMPTS } from '../../pipeline/carrier-breaker.js';
import type { TrackRunSummary } from '../../pipeline/tracking/run-summary.js';
import { planTracking, type TrackPlan } from '../../pipeline/tracking/track-plan.js';
import { runTracking, type TrackRunOptions } from '../../pipeline/tracking/track-run.js';
import {
  TRACKING_WAREHOUSE_OPTIONS,
  trackingWarehouseOptions,
} from '../../pipeline/tracking/tracking-warehouse-options.js';
import { REDIS_KEY_PREFIX } from '../../quota/quota-limiting.js';
import { QuotaPolicySchema } from '../../quota/quota-policy.js';
import { connectRedis, type SharedRedis } from '../../quota/redis-connection.js';
import { csvSource } from '../../sources/csv-source.js';
import { duckdbSource } from '../../sources/duckdb-source.js';
import { mysqlSource } from '../../sources/mysql-source.js';
import type { OrderCodeSource } from '../../sources/order-code-source.js';
import { postgresSource } from '../../sources/postgres-source.js';
import { dataFolder, defaultDataDir } from '../../warehouse/data-folder.js';
import { loadApiKeys } from '../api-keys-config.js';
import { callbackJournalDir, WAREHOUSE_BUSY_WAIT_MS } from '../callback-journal-config.js';
import { checkFlags } from '../flag-check.js';
import { createLogger, LOG_LEVELS, type LogLevel, logLevelOption } from '../logger.js';
import { MYSQL_PASSWORD_ENV, MYSQL_URL_ENV, mysqlConnection } from '../mysql-source-config.js';
import { POSTGRES_URL_ENV, postgresUrl } from '../postgres-source-config.js';
import { trackProgressDisplay } from '../progress-display.js';
import { runClock } from '../run-clock.js';
import { REDIS_URL_ENV, redisUrlWithoutPassword, shardSchema } from '../shared-quota-config.js';
import { giveUpAfterInterrupt, stopOnSignals } from '../stop-signals.js';
import { describeSummary } from '../track-summary-lines.js';
import { keepHeapSmall, memoryLimitSchema } from '../tracking-memory.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { DB_ENV, DEFAULT_DB } from '../warehouse-location.js';

export const TRACKING_URL_ENV = 'PARCEL_RECON_TRACKING_URL';

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);

/** The track command's flags, checked once; every message names the flag. */
const TrackFlagsSchema = z.object({
  input: z.array(z.string()).default([]),
  delimiter: z.enum([',', ';']).optional(),
  fromDuckdb: z.string().optional(),
  fromPostgres: z.union([z.string(), z.literal(true)]).optional(),
  fromMysql: z.union([z.string(), z.literal(true)]).optional(),
  mysqlPasswordFile: z.string().optional(),
  query: z.string().optional(),
  keysFile: z.string().optional(),
  trackingUrl: z.url({ protocol: /^https?$/ }).optional(),
  db: z.string().optional(),
  dataDir: z.string().optional(),
  job: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'lower-case letters, digits and -')
    .default('track'),
  perKeyLimit: nonNegativeInt.optional(),
  globalLimit: nonNegativeInt.optional(),
  reservePerKey: nonNegativeInt.optional(),
  reserveGlobal: nonNegativeInt.optional(),
  dayUtcOffset: z.coerce.number().int().min(-720).max(840).optional(),
  concurrency: positiveInt.max(1024).default(128),
  rate: z.coerce.number().positive().optional(),
  timeoutMs: positiveInt.default(10_000),
  maxAnswerBytes: positiveInt.default(DEFAULT_MAX_ANSWER_BYTES),
  attempts: positiveInt.max(20).default(5),
  breakerAttempts: positiveInt.default(DEFAULT_BREAKER_ATTEMPTS),
  retryMinMs: nonNegativeInt.default(200),
  retryMaxMs: nonNegativeInt.default(10_000),
  batchSize: positiveInt.default(1_000),
  refreshTerminal: z.boolean().default(false),
  maxLookups: nonNegativeInt.optional(),
  graceMs: nonNegativeInt.default(10_000),
  memoryLimit: memoryLimitSchema('256MB').optional(),
  json: z.boolean().default(false),
  plan: z.boolean().default(false),
  progress: z.boolean().default(true),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  redis: redisUrlWithoutPassword.optional(),
  shard: shardSchema.optional(),
});

type TrackFlags = z.output<typeof TrackFlagsSchema>;

async function buildSources(flags: TrackFlags, env: NodeJS.ProcessEnv): Promise<OrderCodeSource[]> {
  const sources: OrderCodeSource[] = flags.input.map((input) => csvSource(input, { delimiter: flags.delimiter }));
  if (flags.fromDuckdb !== undefined) {
    if (flags.query === undefined)
      throw new UserError('--from-duckdb needs --query SQL returning order_code (and optionally account)');
    sources.push(duckdbSource(flags.fromDuckdb, flags.query));
  }
  if (flags.fromPostgres !== undefined) {
    if (flags.query === undefined)
      throw new UserError('--from-postgres needs --query SQL returning order_code (and optionally account)');
    sources.push(postgresSource(postgresUrl(flags.fromPostgres, env), flags.query));
  }
  if (flags.mysqlPasswordFile !== undefined && flags.fromMysql === undefined)
    throw new UserError('--mysql-password-file is the password of --from-mysql, which is not given');
  if (flags.fromMysql !== undefined) {
    if (flags.query === undefined)
      throw new UserError('--from-mysql needs --query SQL returning order_code (and optionally account)');
    const { url, password } = await mysqlConnection(flags.fromMysql, flags.mysqlPasswordFile, env);
    sources.push(mysqlSource(url, flags.query, { password }));
  }
  if (sources.length === 0)
    throw new UserError(
      'no order codes to read: give --input FILE (or - for stdin), --from-duckdb FILE --query SQL, --from-postgres URL --query SQL or --from-mysql URL --query SQL',
    );
  return sources;
}

/** Everything the run needs from flags and environment, checked before anything is read or spent. */
export async function trackRunOptionsFromFlags(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  /** Keys already loaded (from a configuration file); else --keys-file or the environment. */
  preloadedKeys?: KeyRing,
): Promise<{
  options: Omit<TrackRunOptions, 'warehouse' | 'progress' | 'stop' | 'sharedQuota'>;
  dbPath: string;
  flags: TrackFlags;
  redisUrl: string | undefined;
}> {
  const flags = checkFlags(TrackFlagsSchema, raw);
  // A plan asks the carrier nothing: it needs no tracking URL.
  const trackingUrl = flags.trackingUrl ?? env[TRACKING_URL_ENV] ?? (flags.plan ? '' : undefined);
  if (trackingUrl === undefined)
    throw new UserError(`no tracking URL: give --tracking-url URL or set ${TRACKING_URL_ENV}`);
  const checkedUrl = z.url({ protocol: /^https?$/ }).safeParse(trackingUrl);
  if (!checkedUrl.success && !(flags.plan && trackingUrl === ''))
    throw new UserError(`${TRACKING_URL_ENV}: not an http(s) URL`);
  const keys: KeyRing = preloadedKeys ?? (await loadApiKeys(flags.keysFile, env));
  const quota = QuotaPolicySchema.parse({
    perKeyDaily: flags.perKeyLimit,
    globalDaily: flags.globalLimit,
    reservePerKey: flags.reservePerKey,
    reserveGlobal: flags.reserveGlobal,
    dayUtcOffsetMinutes: flags.dayUtcOffset,
    maxConcurrent: flags.concurrency,
    requestsPerSecond: flags.rate,
  });
  const dbPath = flags.db ?? env[DB_ENV] ?? DEFAULT_DB;
  const redisUrl = flags.redis ?? env[REDIS_URL_ENV];
  if (redisUrl !== undefined && !/^rediss?:\/\/./.test(redisUrl))
    throw new UserError(`${REDIS_URL_ENV}: not a redis:// or rediss:// URL`);
  return {
    dbPath,
    flags,
    redisUrl,
    options: {
      exitCodes: RUN_EXIT_CODES,
      shard: flags.shard,
      job: flags.job,
      sources: await buildSources(flags, env),
      keys,
      dataDir: flags.dataDir ?? defaultDataDir(dbPath),
      client: {
        trackingUrl,
        timeoutMs: flags.timeoutMs,
        maxAnswerBytes: flags.maxAnswerBytes,
        connections: Math.min(flags.concurrency, 256),
      },
      quota,
      retry: {
        attempts: flags.attempts,
        minDelayMs: flags.retryMinMs,
        maxDelayMs: Math.max(flags.retryMinMs, flags.retryMaxMs),
      },
      breakerAttempts: flags.breakerAttempts,
      batchSize: flags.batchSize,
      refreshTerminal: flags.refreshTerminal,
      maxLookups: flags.maxLookups,
      now: runClock(env),
      logger,
      graceMs: flags.graceMs,
    },
  };
}

/** The process's peak resident memory so far (max RSS), in MB. */
function peakMemoryMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/**
 * After a second SIGINT/SIGTERM the run gives up its lookups in flight and finishes as interrupted,
 * in well under this; past it the process ends anyway, so that it is gone within 2 s.
 */
const INTERRUPT_GIVE_UP_MS = 1_500;

/** The plan as a person reads it. */
export function describePlan(plan: TrackPlan): string {
  const c = plan.codes;
  const line = (name: string, p: { toLookUp: number; leftToday: number; wouldSpend: number; wouldDefer: number }) =>
    `  ${name.padEnd(24)} to look up ${String(p.toLookUp).padStart(8)}, left today ${String(p.leftToday).padStart(9)}: would spend ${p.wouldSpend}, defer ${p.wouldDefer}`;
  return [
    `plan for carrier day ${plan.carrierDay} (nothing spent)${plan.maxLookups === null ? '' : `, --max-lookups ${plan.maxLookups}`}`,
    `  codes read ${c.read}, rejected ${c.rejected}, duplicates ${c.duplicate}, terminal orders skipped ${c.terminalSkipped}`,
    ...plan.keys.map((k) => line(k.alias, k)),
    line('all keys', plan.total),
    '',
  ].join('\n');
}

export function trackCommand(): Command {
  return new Command('track')
    .description(
      "Look order codes up through the carrier's tracking API within the daily quotas and load the results into the warehouse.",
    )
    .addOption(
      new Option(
        '--input <file>',
        'CSV file with an order_code column (and optionally account); repeatable; - reads stdin',
      ).argParser((v: string, prev: string[] = []) => [...prev, v]),
    )
    .addOption(
      new Option('--delimiter <char>', 'CSV delimiter (default: detected from the header)').choices([',', ';']),
    )
    .option('--from-duckdb <file>', 'read codes from a DuckDB file with --query')
    .option(
      '--from-postgres [url]',
      `read codes from PostgreSQL with --query (postgres://user@host:port/db, no password: it comes from PGPASSWORD or ~/.pgpass; without a URL, the whole URL is taken from $${POSTGRES_URL_ENV})`,
    )
    .option(
      '--from-mysql [url]',
      `read codes from MySQL or MariaDB with --query (mysql://user@host:port/db, no password: it comes from $${MYSQL_PASSWORD_ENV} or --mysql-password-file; without a URL, the whole URL is taken from $${MYSQL_URL_ENV})`,
    )
    .option('--mysql-password-file <file>', "the --from-mysql password, the file's first line (mode 600)")
    .option('--query <sql>', 'SQL returning order_code and optionally account')
    .option('--keys-file <file>', 'JSON {alias: key}, mode 600 (default: $PARCEL_RECON_API_KEYS as alias=key,...)')
    .option('--tracking-url <url>', `the carrier's tracking address (default: $${TRACKING_URL_ENV})`)
    .option('--db <file>', `the warehouse (default: $${DB_ENV} or ${DEFAULT_DB})`)
    .option('--data-dir <dir>', "where spool and rejects files go (default: the warehouse's folder)")
    .option('--job <name>', 'job name recorded with the run (default: track)')
    .option('--per-key-limit <n>', 'lookups per key per carrier day (default: 200000)')
    .option('--global-limit <n>', 'lookups per carrier day over all keys (default: 3000000)')
    .option('--reserve-per-key <n>', 'lookups per key left for other systems using the same keys (default: 0)')
    .option('--reserve-global <n>', 'lookups in total left for other systems (default: 0)')
    .option('--day-utc-offset <minutes>', "UTC offset of the carrier day's midnight (default: 420, UTC+07:00)")
    .option('--concurrency <n>', 'lookups in flight at once (default: 128)')
    .option('--rate <n>', 'lookups started per second at most, over all keys (default: no cap)')
    .option('--timeout-ms <ms>', 'time allowed for one request (default: 10000)')
    .option(
      '--max-answer-bytes <n>',
      `the largest answer body read; a larger one is not read further and fails its lookup with LOOKUP_TOO_LARGE, not retried (default: ${DEFAULT_MAX_ANSWER_BYTES})`,
    )
    .option('--attempts <n>', 'attempts per order on transient failures, each counted against the quota (default: 5)')
    .option(
      '--breaker-attempts <n>',
      `stop sending once this many attempts in a row got no answer from the carrier (refused, reset, timed out, 5xx): the orders left are deferred and the run exits 1 (default: ${DEFAULT_BREAKER_ATTEMPTS})`,
    )
    .option('--retry-min-ms <ms>', 'first backoff delay, doubled each retry, with jitter (default: 200)')
    .option('--retry-max-ms <ms>', 'longest backoff delay (default: 10000)')
    .option(
      '--batch-size <n>',
      'results committed per warehouse transaction; up to 4 times as many while a commit runs (default: 1000)',
    )
    .option(
      '--refresh-terminal',
      'look up again orders whose stored status or latest status callback is terminal (30, 28, 19, 18, 32)',
    )
    .option('--max-lookups <n>', 'spend at most this many lookups in this run')
    .option(
      '--redis <url>',
      `share the quotas with other workers through this Redis: limiters in Bottleneck's clustered mode, the daily ledger in Redis (no password: the whole URL comes from $${REDIS_URL_ENV})`,
    )
    .option(
      '--shard <i/n>',
      'look up only the codes whose hash modulo N is I (0-based); each worker writes its own warehouse, then `merge`',
    )
    .option('--grace-ms <ms>', 'on SIGINT/SIGTERM, time in-flight lookups get to finish (default: 10000)')
    .option(
      '--memory-limit <size>',
      `the warehouse's DuckDB memory limit; past it DuckDB spills to disk (default: ${TRACKING_WAREHOUSE_OPTIONS.memoryLimit})`,
    )
    .option(
      '--plan',
      'print what a run would spend per key against what is left today, and spend nothing (with --json: as JSON)',
    )
    .option('--json', 'print the summary as JSON on stdout')
    .option('--no-progress', 'no progress bar, even on a terminal')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      `
Exit codes: 0 done, every code got a result or an answer about the order (ORDERCODE_NOT_FOUND, ...);
1 some orders failed for good (EXCEPTION or a transport failure after every retry; listed in the summary
and lookup_results), the carrier does not know a key (its orders deferred as key_not_found), or the carrier
is unreachable or failing (--breaker-attempts in a row without an answer: the orders left deferred as carrier_down);
2 bad input (nothing spent); 3 partial: quota spent, --max-lookups reached or stopped (committed work is kept;
a second SIGINT/SIGTERM gives up the lookups in flight at once and the run ends interrupted);
4 the warehouse is in use by another process. With --redis: Redis down at the start is exit 1 (nothing spent);
Redis lost during the run stops the lookups, commits what is done and exits 3.
Environment: PARCEL_RECON_API_KEYS, ${TRACKING_URL_ENV}, ${DB_ENV}, ${POSTGRES_URL_ENV}, ${MYSQL_URL_ENV}, ${MYSQL_PASSWORD_ENV}, PARCEL_RECON_NOW (pretend the time, for demos and tests),
PARCEL_RECON_CALLBACK_JOURNAL (the callback journal loaded before the lookups; default: callbacks/ beside the warehouse).`,
    )
    .action(async (raw: Record<string, unknown>) => {
      // The flag's choices are the log levels: commander refused any other value.
      const logger = createLogger({ level: raw.logLevel as LogLevel | undefined });
      const { options, dbPath, flags, redisUrl } = await trackRunOptionsFromFlags(raw, process.env, logger);
      keepHeapSmall();
      const warehouse = await openWarehouseForCommand(
        dbPath,
        trackingWarehouseOptions(flags.memoryLimit),
        WAREHOUSE_BUSY_WAIT_MS,
      );
      if (flags.plan) {
        try {
          const plan = await planTracking({ ...options, warehouse });
          process.stdout.write(flags.json ? `${JSON.stringify(plan)}\n` : describePlan(plan));
        } finally {
          await warehouse.close();
        }
        return;
      }
      const redis =
        redisUrl === undefined || flags.plan ? undefined : await connectRedisForCommand(redisUrl, warehouse);
      const signals = stopOnSignals({ interruptible: true });
      giveUpAfterInterrupt(signals.interrupt, INTERRUPT_GIVE_UP_MS, {
        exitCode: EXIT.PARTIAL,
        line: 'parcel-recon: interrupted: ended before its run finished; committed work is kept and the next track resumes the run',
        // A statement under way (the work list's selection, a commit) would hold the exit until it ends.
        before: () => warehouse.interrupt(),
      });
      let summary: TrackRunSummary;
      try {
        // The status callbacks journaled since the last run come in first: a terminal one spares a lookup.
        // A journal that cannot be loaded stays for the next load; the run goes on.
        // Where the receiver, which takes no --data-dir, keeps it: the warehouse's own data folder.
        const journalDir = callbackJournalDir(defaultDataDir(dbPath), undefined, process.env);
        await ingestCallbackJournalAsGuest(warehouse, journalDir, {
          spoolDir: dataFolder(options.dataDir).callbackSpool,
          logger,
        }).catch((error: unknown) =>
          logger.error(
            { journalDir, error: error instanceof Error ? error.message : String(error) },
            'callback journal not loaded',
          ),
        );
        summary = await runTracking({
          ...options,
          warehouse,
          stop: signals.signal,
          interrupt: signals.interrupt,
          sharedQuota: redis && { redis, prefix: REDIS_KEY_PREFIX },
          progress: trackProgressDisplay(logger, flags.progress),
        });
      } finally {
        signals.dispose();
        await redis?.close();
        await warehouse.close();
      }
      // Once the warehouse is closed, its last checkpoint included: what the run needed at most.
      const printed = { ...summary, peakMemoryMb: peakMemoryMb() };
      process.stdout.write(flags.json ? `${JSON.stringify(printed)}\n` : describeSummary(printed, dbPath));
      if (summary.carrierDown !== null) process.stderr.write(`parcel-recon: ${summary.carrierDown}\n`);
      process.exitCode = summary.exitCode;
    });
}

/** Redis down at the start: the warehouse is closed, nothing was spent. */
async function connectRedisForCommand(url: string, warehouse: { close(): Promise<void> }): Promise<SharedRedis> {
  try {
    return await connectRedis(url);
  } catch (error) {
    await warehouse.close();
    throw error;
  }
}
