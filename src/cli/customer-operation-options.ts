import type { Command } from 'commander';
import type { Logger } from 'pino';
import { z } from 'zod';
import { RUN_EXIT_CODES } from '../errors/exit-codes.js';
import { UserError } from '../errors/user-error.js';
import type { CustomerRunOptions, OperationProgress } from '../pipeline/customer-operation-run.js';
import { type CustomerOperation, offeredOperation } from '../pipeline/offered-operations.js';
import type { ProgressListener } from '../pipeline/run-lifecycle.js';
import { SETTINGS, type Settings } from '../settings/catalog.js';
import { withSettingOptions } from '../settings/command-options.js';
import type { ResolvedSettings } from '../settings/resolve-settings.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { settingsKeyRing } from './api-keys-config.js';
import { LOG_LEVELS, logLevelOption } from './logger.js';
import { operationProgressDisplay } from './progress-display.js';
import { runClock } from './run-clock.js';
import { stopOnSignals } from './stop-signals.js';
import { openWarehouseForCommand } from './warehouse-access.js';

/** The flags of one price or images invocation; their settings are the catalog's. */
export const CustomerOperationFlagsSchema = z.object({
  json: z.boolean().default(false),
  progress: z.boolean().default(true),
  logLevel: z.enum(LOG_LEVELS).default('info'),
});

/** Adds the settings and flags the price and images commands share. */
export function withCustomerOperationFlags(command: Command, job: 'price' | 'images'): Command {
  return withSettingOptions(command, job, SETTINGS)
    .option('--json', 'print the summary as JSON on stdout')
    .option('--no-progress', 'no progress bar, even on a terminal')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      `
Exit codes: 0 done; 1 some requests failed after every retry (listed in the summary); 2 bad input (nothing sent);
3 stopped (SIGINT/SIGTERM; what was done is committed); 4 the warehouse is in use by another process.
Job name recorded in runs: ${job}.`,
    );
}

/**
 * The run options the settings give, checked before anything is read or sent: what price, images and
 * the finance audit run. A carrier that does not offer `operation` is refused first.
 */
export async function customerRunOptions(
  settings: ResolvedSettings<Settings>,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  job: string,
  operation: CustomerOperation,
): Promise<Omit<CustomerRunOptions, 'progress' | 'stop'>> {
  const v = settings.values;
  offeredOperation(v.carrier, operation);
  if (v.baseUrl === undefined)
    throw new UserError(`no carrier address: give --base-url URL or set ${SETTINGS.baseUrl.env}`);
  return {
    exitCodes: RUN_EXIT_CODES,
    job,
    carrier: v.carrier,
    keys: await settingsKeyRing(settings),
    client: {
      baseUrl: v.baseUrl,
      authHeader: v['price.authHeader'],
      timeoutMs: v['price.timeoutMs'],
      maxAnswerBytes: v['price.maxAnswerBytes'],
      connections: v['price.concurrency'],
    },
    pace: { requestsPerSecond: v['price.rate'], concurrency: v['price.concurrency'] },
    retry: {
      attempts: v['price.attempts'],
      minDelayMs: v['price.retryMinMs'],
      maxDelayMs: Math.max(v['price.retryMinMs'], v['price.retryMaxMs']),
    },
    dataDir: v.dataDir,
    batchSize: v['price.batchSize'],
    now: runClock(env),
    logger,
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
