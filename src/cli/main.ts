#!/usr/bin/env node
import './before-duckdb-loads.js';
import { Command, CommanderError } from 'commander';
import { EXIT } from '../errors/exit-codes.js';
import { exitCodeOf, failureLine, productErrorOf, type Wording } from './failure-advice.js';
import { ASKS_VERSION_ONLY, INVOKED_COMMAND } from './invoked-command.js';

const program = new Command('parcel-recon')
  .description(
    "Reconcile a parcel carrier's tracking, charges and callbacks into a DuckDB warehouse, within its daily quotas.",
  )
  .version('0.1.0')
  .showHelpAfterError('(add --help for usage)')
  .exitOverride();

/**
 * Each command's module, in the order help lists them, imported when its command runs: a night's
 * `track` then holds none of the other commands' code and libraries, which lowers its peak memory.
 * Help and an unknown name load them all, to list them; `--version` alone loads none.
 */
const COMMAND_MODULES: Readonly<Record<string, () => Promise<Command>>> = {
  demo: async () => (await import('./commands/demo-command.js')).demoCommand(),
  track: async () => (await import('./commands/track-command.js')).trackCommand(),
  price: async () => (await import('./commands/price-command.js')).priceCommand(),
  images: async () => (await import('./commands/images-command.js')).imagesCommand(),
  quota: async () => (await import('./commands/quota-command.js')).quotaCommand(),
  sql: async () => (await import('./commands/sql-command.js')).sqlCommand(),
  export: async () => (await import('./commands/export-command.js')).exportCommand(),
  sandbox: async () => (await import('./commands/sandbox-command.js')).sandboxCommand(),
  replay: async () => (await import('./commands/replay-command.js')).replayCommand(),
  callbacks: async () => (await import('./commands/callbacks-command.js')).callbacksCommand(),
  report: async () => (await import('./commands/report-command.js')).reportCommand(),
  payouts: async () => (await import('./commands/payouts-command.js')).payoutsCommand(),
  findings: async () => (await import('./commands/findings-command.js')).findingsCommand(),
  jobs: async () => (await import('./commands/jobs-command.js')).jobsCommand(),
  schedule: async () => (await import('./commands/schedule-command.js')).scheduleCommand(),
  merge: async () => (await import('./commands/merge-command.js')).mergeCommand(),
  prune: async () => (await import('./commands/prune-command.js')).pruneCommand(),
  upgrade: async () => (await import('./commands/upgrade-command.js')).upgradeCommand(),
  config: async () => (await import('./commands/config-command.js')).configCommand(),
};

const named = INVOKED_COMMAND;
const commandsToLoad = ASKS_VERSION_ONLY
  ? []
  : named !== undefined && Object.hasOwn(COMMAND_MODULES, named)
    ? [COMMAND_MODULES[named]!]
    : Object.values(COMMAND_MODULES);
for (const command of await Promise.all(commandsToLoad.map((load) => load())))
  program.addCommand(command.exitOverride());

/** `jobs` and `schedule` run jobs from the configuration file: advice names its keys, not flags. */
const wording: Wording = named === 'jobs' || named === 'schedule' ? 'job' : 'command';

/**
 * Runs the command line. A product error (a user's mistake, a busy or broken warehouse...) is one
 * line on stderr with the exit code of its code, never a stack trace.
 */
async function main(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return EXIT.OK;
      return EXIT.BAD_INPUT;
    }
    const failure = productErrorOf(error);
    if (failure !== undefined) {
      process.stderr.write(`parcel-recon: ${failureLine(failure, wording)}\n`);
      return exitCodeOf(failure.code);
    }
    process.stderr.write(
      `parcel-recon: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.FAILURE;
  }
}

// A reader that stops early (`parcel-recon track --help | head`) closes the pipe: the output is done, not failed.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(EXIT.OK);
});

process.exitCode = await main(process.argv);
