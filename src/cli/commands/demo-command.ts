import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../carriers/client/answer-size.js';
import { KeyRing } from '../../carriers/client/key-ring.js';
import { DEFAULT_CARRIER_ID, findCarrier } from '../../carriers/known-carriers.js';
import { RUN_EXIT_CODES } from '../../errors/exit-codes.js';
import { runTracking } from '../../pipeline/tracking/track-run.js';
import { carrierQuotaPolicy } from '../../quota/quota-policy.js';
import { SANDBOX_CARRIERS } from '../../sandbox/carriers/sandbox-carriers.js';
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

/** The sample CSV of the orders of a carrier the sandbox serves beside 247Express: in its sandbox folder. */
function sampleOrdersOf(carrierId: string): string {
  return resolve(projectRoot, `src/sandbox/carriers/${carrierId}/sample-orders.csv`);
}

/** The flag naming the CSV of a served carrier's orders: `--ghn-input`. */
function inputFlagOf(carrierId: string): { flag: string; key: string } {
  const flag = `--${carrierId}-input <file>`;
  return { flag, key: new Option(flag).attributeName() };
}

/** What differs between the demo's runs: the carrier, its sandbox address, its accounts' keys, its codes. */
interface DemoCarrierRun {
  readonly carrier: string;
  readonly trackingUrl: string;
  readonly keys: KeyRing;
  readonly input: string;
}

/**
 * The main job on a machine with no carrier account: the sandbox in-process, the sample CSVs of
 * 247Express's orders and of each carrier the sandbox serves beside it tracked through it into one
 * warehouse, and the summaries with where everything is.
 */
export function demoCommand(): Command {
  const command = new Command('demo')
    .description(
      "Run the main job against the built-in carrier sandbox: track the sample CSVs of every carrier's orders (247Express's, GHN's) into one warehouse and print the summaries.",
    )
    .option('--input <file>', "CSV of 247Express's order codes to track", SAMPLE_ORDERS);
  for (const carrier of SANDBOX_CARRIERS)
    command.option(
      inputFlagOf(carrier.id).flag,
      `CSV of ${carrier.name}'s order codes to track`,
      sampleOrdersOf(carrier.id),
    );
  return command
    .option('--db <file>', 'the warehouse', SETTINGS.warehouse.default)
    .addOption(logLevelOption('warn').default('warn'))
    .action(async (flags: { input: string; db: string; logLevel: LogLevel } & Record<string, string>) => {
      const logger = createLogger({ level: flags.logLevel });
      const sandbox = await startSandbox({ port: 0, clockMode: 'manual' }, logger);
      // A warehouse that cannot be opened ends the demo: its sandbox would keep the process serving.
      const warehouse = await openWarehouseForCommand(flags.db).catch(async (error: unknown) => {
        await sandbox.stop();
        throw error;
      });
      const signals = stopOnSignals();
      const runs: DemoCarrierRun[] = [
        {
          carrier: DEFAULT_CARRIER_ID,
          trackingUrl: sandbox.url,
          keys: new KeyRing(sandbox.state.world.accounts.map((a) => [a.alias, a.apiKey] as const)),
          input: flags.input,
        },
        ...[...sandbox.state.carriers.values()].map(({ carrier, world }) => ({
          carrier: carrier.id,
          trackingUrl: `${sandbox.url}${carrier.basePath}`,
          keys: new KeyRing(
            world.accounts.map((a) => [a.alias, a.apiKey] as const),
            carrier.shopOf ? new Map(world.accounts.map((a) => [a.alias, carrier.shopOf!(a)])) : undefined,
          ),
          input: flags[inputFlagOf(carrier.id).key]!,
        })),
      ];
      try {
        let exitCode = 0;
        for (const run of runs) {
          const summary = await runTracking({
            exitCodes: RUN_EXIT_CODES,
            job: run.carrier === DEFAULT_CARRIER_ID ? 'demo' : `demo-${run.carrier}`,
            carrier: run.carrier,
            sources: [csvSource(run.input, {})],
            keys: run.keys,
            warehouse,
            dataDir: defaultDataDir(flags.db),
            client: {
              trackingUrl: run.trackingUrl,
              timeoutMs: 5_000,
              maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
              connections: 16,
            },
            // The demo's carriers are its own sandbox: no rate to keep to.
            quota: carrierQuotaPolicy(run.carrier, { maxConcurrent: 16, requestsPerSecond: 0 }),
            retry: { attempts: 5, minDelayMs: 100, maxDelayMs: 2_000 },
            batchSize: 500,
            refreshTerminal: true,
            now: () => sandbox.state.clock.now(),
            logger,
            progress: trackProgressDisplay(logger, true),
            stop: signals.signal,
            graceMs: 5_000,
          });
          process.stdout.write(`${findCarrier(run.carrier)!.name}:\n${describeSummary(summary, flags.db)}`);
          exitCode = Math.max(exitCode, summary.exitCode);
          if (signals.signal.aborted) break;
        }
        process.stdout.write(
          [
            `  carrier sandbox: ${sandbox.url} (stopped now; run it on its own with: parcel-recon sandbox --keys-out data/sandbox-keys.json)`,
            `  query it: parcel-recon sql --db ${flags.db} "SELECT carrier, status, status_name, count(*) AS orders FROM orders GROUP BY ALL ORDER BY orders DESC"`,
            '',
          ].join('\n'),
        );
        process.exitCode = exitCode;
      } finally {
        signals.dispose();
        await warehouse.close();
        await sandbox.stop();
      }
    });
}
