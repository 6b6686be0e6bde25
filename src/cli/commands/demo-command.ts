import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../carriers/client/carrier-request.js';
import { KeyRing } from '../../carriers/client/key-ring.js';
import { DEFAULT_CARRIER_ID } from '../../carriers/known-carriers.js';
import { RUN_EXIT_CODES } from '../../errors/exit-codes.js';
import { runTracking } from '../../pipeline/tracking/track-run.js';
import { QuotaPolicySchema } from '../../quota/quota-policy.js';
import { startSandbox } from '../../sandbox/sandbox.js';
import { SETTINGS } from '../../settings/catalog.js';
import { csvSource } from '../../sources/csv-source.js';
import { defaultDataDir } from '../../warehouse/data-folder.js';
import { createLogger, type LogLevel, logLevelOption } from '../logger.js';
import { trackProgressDisplay } from '../progress-display.js';
import { stopOnSignals } from '../stop-signals.js';
import { describeSummary } from '../track-summary-lines.js';
import { openWarehouseForCommand } from '../warehouse-access.js';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
export const SAMPLE_ORDERS = resolve(projectRoot, 'data/samples/orders.csv');

/**
 * The main job on a machine with no carrier account: the sandbox in-process, the sample CSV tracked
 * through it into the warehouse, and the summary with where everything is.
 */
export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'Run the main job against the built-in carrier sandbox: track the sample CSV into the warehouse and print the summary.',
    )
    .option('--input <file>', 'CSV of order codes to track', SAMPLE_ORDERS)
    .option('--db <file>', 'the warehouse', SETTINGS.warehouse.default)
    .addOption(logLevelOption('warn').default('warn'))
    .action(async (flags: { input: string; db: string; logLevel: LogLevel }) => {
      const logger = createLogger({ level: flags.logLevel });
      const sandbox = await startSandbox({ port: 0, clockMode: 'manual' }, logger);
      // A warehouse that cannot be opened ends the demo: its sandbox would keep the process serving.
      const warehouse = await openWarehouseForCommand(flags.db).catch(async (error: unknown) => {
        await sandbox.stop();
        throw error;
      });
      const signals = stopOnSignals();
      try {
        const keys = new KeyRing(sandbox.state.world.accounts.map((a) => [a.alias, a.apiKey] as const));
        const summary = await runTracking({
          exitCodes: RUN_EXIT_CODES,
          job: 'demo',
          carrier: DEFAULT_CARRIER_ID,
          sources: [csvSource(flags.input, {})],
          keys,
          warehouse,
          dataDir: defaultDataDir(flags.db),
          client: {
            trackingUrl: sandbox.url,
            timeoutMs: 5_000,
            maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
            connections: 16,
          },
          quota: QuotaPolicySchema.parse({ maxConcurrent: 16 }),
          retry: { attempts: 5, minDelayMs: 100, maxDelayMs: 2_000 },
          batchSize: 500,
          refreshTerminal: true,
          now: () => sandbox.state.clock.now(),
          logger,
          progress: trackProgressDisplay(logger, true),
          stop: signals.signal,
          graceMs: 5_000,
        });
        process.stdout.write(describeSummary(summary, flags.db));
        process.stdout.write(
          [
            `  carrier sandbox: ${sandbox.url} (stopped now; run it on its own with: parcel-recon sandbox --keys-out data/sandbox-keys.json)`,
            `  query it: parcel-recon sql --db ${flags.db} "SELECT status, status_name, count(*) AS orders FROM orders GROUP BY ALL ORDER BY orders DESC"`,
            '',
          ].join('\n'),
        );
        process.exitCode = summary.exitCode;
      } finally {
        signals.dispose();
        await warehouse.close();
        await sandbox.stop();
      }
    });
}
