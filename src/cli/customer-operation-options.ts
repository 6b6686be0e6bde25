import type { Command } from 'commander';
import type { Logger } from 'pino';
import { z } from 'zod';
import { DEFAULT_MAX_ANSWER_BYTES } from '../carrier/client/carrier-request.js';
import type { KeyRing } from '../carrier/client/key-ring.js';
import { RUN_EXIT_CODES } from '../errors/exit-codes.js';
import { UserError } from '../errors/user-error.js';
import type { CustomerRunOptions, OperationProgress } from '../pipeline/customer-operation-run.js';
import type { ProgressListener } from '../pipeline/run-lifecycle.js';
import { DEFAULT_OPERATION_PACE } from '../quota/operation-pace.js';
import { defaultDataDir } from '../warehouse/data-folder.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { loadApiKeys } from './api-keys-config.js';
import { LOG_LEVELS, logLevelOption } from './logger.js';
import { operationProgressDisplay } from './progress-display.js';
import { runClock } from './run-clock.js';
import { stopOnSignals } from './stop-signals.js';
import { openWarehouseForCommand } from './warehouse-access.js';
import { DB_ENV, DEFAULT_DB } from './warehouse-location.js';

export const BASE_URL_ENV = 'PARCEL_RECON_BASE_URL';
/** What the sandbox expects; the carrier's interface does not say how these operations authenticate. */
export const DEFAULT_AUTH_HEADER = 'ApiKey';

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);

/** The flags the price and images commands share, checked once; every message names the flag. */
export const CustomerOperationFlagsSchema = z.object({
  keysFile: z.string().optional(),
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  authHeader: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'an HTTP header name')
    .default(DEFAULT_AUTH_HEADER),
  db: z.string().optional(),
  dataDir: z.string().optional(),
  rate: z.coerce.number().positive().max(10_000).default(DEFAULT_OPERATION_PACE.requestsPerSecond),
  concurrency: positiveInt.max(256).default(DEFAULT_OPERATION_PACE.concurrency),
  timeoutMs: positiveInt.default(10_000),
  maxAnswerBytes: positiveInt.default(DEFAULT_MAX_ANSWER_BYTES),
  attempts: positiveInt.max(20).default(5),
  retryMinMs: nonNegativeInt.default(200),
  retryMaxMs: nonNegativeInt.default(10_000),
  batchSize: positiveInt.default(500),
  json: z.boolean().default(false),
  progress: z.boolean().default(true),
  logLevel: z.enum(LOG_LEVELS).default('info'),
});

/** Adds the shared flags to a command. */
export function withCustomerOperationFlags(command: Command, job: string): Command {
  return command
    .option('--keys-file <file>', 'JSON {alias: key}, mode 600 (default: $PARCEL_RECON_API_KEYS as alias=key,...)')
    .option('--base-url <url>', `the carrier's base address for the customer operations (default: $${BASE_URL_ENV})`)
    .option(
      '--auth-header <name>',
      `the header the API key is sent in; the carrier does not document it, the sandbox expects ${DEFAULT_AUTH_HEADER} (default: ${DEFAULT_AUTH_HEADER})`,
    )
    .option('--db <file>', `the warehouse (default: $${DB_ENV} or ${DEFAULT_DB})`)
    .option('--data-dir <dir>', "where spool and rejects files go (default: the warehouse's folder)")
    .option(
      '--rate <n>',
      `requests started per second at most (default: ${DEFAULT_OPERATION_PACE.requestsPerSecond}; no quota is documented)`,
    )
    .option('--concurrency <n>', `requests in flight at once (default: ${DEFAULT_OPERATION_PACE.concurrency})`)
    .option('--timeout-ms <ms>', 'time allowed for one request (default: 10000)')
    .option(
      '--max-answer-bytes <n>',
      `the largest answer body read; a larger one is not read further and fails its request with LOOKUP_TOO_LARGE, not retried (default: ${DEFAULT_MAX_ANSWER_BYTES})`,
    )
    .option('--attempts <n>', 'attempts per request on transient failures (default: 5)')
    .option('--retry-min-ms <ms>', 'first backoff delay, doubled each retry, with jitter (default: 200)')
    .option('--retry-max-ms <ms>', 'longest backoff delay (default: 10000)')
    .option('--batch-size <n>', 'results committed per warehouse transaction (default: 500)')
    .option('--json', 'print the summary as JSON on stdout')
    .option('--no-progress', 'no progress bar, even on a terminal')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      `
Exit codes: 0 done; 1 some requests failed after every retry (listed in the summary); 2 bad input (nothing sent);
3 stopped (SIGINT/SIGTERM; what was done is committed); 4 the warehouse is in use by another process.
Environment: PARCEL_RECON_API_KEYS, ${BASE_URL_ENV}, ${DB_ENV}, PARCEL_RECON_NOW. Job name recorded in runs: ${job}.`,
    );
}

/** The run options the shared flags give, checked before anything is read or sent. */
export async function customerRunOptions(
  flags: z.output<typeof CustomerOperationFlagsSchema>,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  job: string,
  /** Keys already loaded (from a configuration file); else --keys-file or the environment. */
  preloadedKeys?: KeyRing,
): Promise<{ options: Omit<CustomerRunOptions, 'progress' | 'stop'>; dbPath: string }> {
  const baseUrl = flags.baseUrl ?? env[BASE_URL_ENV];
  if (baseUrl === undefined || baseUrl === '')
    throw new UserError(`no carrier address: give --base-url URL or set ${BASE_URL_ENV}`);
  if (!z.url({ protocol: /^https?$/ }).safeParse(baseUrl).success)
    throw new UserError(`${BASE_URL_ENV}: not an http(s) URL`);
  const keys = preloadedKeys ?? (await loadApiKeys(flags.keysFile, env));
  const dbPath = flags.db ?? env[DB_ENV] ?? DEFAULT_DB;
  return {
    dbPath,
    options: {
      exitCodes: RUN_EXIT_CODES,
      job,
      keys,
      client: {
        baseUrl,
        authHeader: flags.authHeader,
        timeoutMs: flags.timeoutMs,
        maxAnswerBytes: flags.maxAnswerBytes,
        connections: flags.concurrency,
      },
      pace: { requestsPerSecond: flags.rate, concurrency: flags.concurrency },
      retry: {
        attempts: flags.attempts,
        minDelayMs: flags.retryMinMs,
        maxDelayMs: Math.max(flags.retryMinMs, flags.retryMaxMs),
      },
      dataDir: flags.dataDir ?? defaultDataDir(dbPath),
      batchSize: flags.batchSize,
      now: runClock(env),
      logger,
    },
  };
}

/**
 * Runs a price or images run on the warehouse, stopped by SIGINT/SIGTERM, with a progress bar on a
 * terminal (else log lines); prints its summary (JSON with --json) and sets the exit code.
 */
export async function runOnWarehouse<S extends { readonly exitCode: number }>(
  dbPath: string,
  flags: { readonly json: boolean; readonly progress: boolean },
  logger: Logger,
  run: (
    warehouse: Warehouse,
    control: { stop: AbortSignal; progress: ProgressListener<OperationProgress> },
  ) => Promise<S>,
  describe: (summary: S, dbPath: string) => string,
): Promise<void> {
  const warehouse = await openWarehouseForCommand(dbPath);
  const signals = stopOnSignals();
  try {
    const progress = operationProgressDisplay(logger, flags.progress);
    const summary = await run(warehouse, { stop: signals.signal, progress });
    process.stdout.write(flags.json ? `${JSON.stringify(summary)}\n` : describe(summary, dbPath));
    process.exitCode = summary.exitCode;
  } finally {
    signals.dispose();
    await warehouse.close();
  }
}
