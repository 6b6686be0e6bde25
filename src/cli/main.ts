#!/usr/bin/env node
import './before-duckdb-loads.js';
import { Command, CommanderError } from 'commander';
import { callbacksCommand } from './commands/callbacks-command.js';
import { demoCommand } from './commands/demo-command.js';
import { imagesCommand } from './commands/images-command.js';
import { jobsCommand } from './commands/jobs-command.js';
import { mergeCommand } from './commands/merge-command.js';
import { priceCommand } from './commands/price-command.js';
import { quotaCommand } from './commands/quota-command.js';
import { reportCommand } from './commands/report-command.js';
import { replayCommand } from './commands/replay-command.js';
import { sandboxCommand } from './commands/sandbox-command.js';
import { scheduleCommand } from './commands/schedule-command.js';
import { sqlCommand } from './commands/sql-command.js';
import { trackCommand } from './commands/track-command.js';
import { SourceError } from '../sources/order-code-source.js';
import { WarehouseError } from '../warehouse/warehouse-errors.js';
import { EXIT, UserError } from './exit-codes.js';

const program = new Command('parcel-recon')
  .description('Reconcile a parcel carrier\'s tracking, charges and callbacks into a DuckDB warehouse, within its daily quotas.')
  .version('0.1.0')
  .showHelpAfterError('(add --help for usage)')
  .exitOverride();

const COMMANDS = [
  demoCommand(),
  trackCommand(),
  priceCommand(),
  imagesCommand(),
  quotaCommand(),
  sqlCommand(),
  sandboxCommand(),
  replayCommand(),
  callbacksCommand(),
  reportCommand(),
  jobsCommand(),
  scheduleCommand(),
  mergeCommand(),
];
for (const command of COMMANDS) program.addCommand(command.exitOverride());

/** Runs the command line; a user's mistake is one line on stderr and exit code 2, never a stack trace; so is a warehouse failure (exit code 1). */
async function main(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.OK;
      return EXIT.BAD_INPUT;
    }
    if (error instanceof SourceError) {
      process.stderr.write(`parcel-recon: ${error.message}\n`);
      return EXIT.BAD_INPUT;
    }
    if (error instanceof WarehouseError) {
      process.stderr.write(`parcel-recon: ${error.message}\n`);
      return EXIT.FAILURE;
    }
    if (error instanceof UserError) {
      process.stderr.write(`parcel-recon: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`parcel-recon: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.FAILURE;
  }
}

process.exitCode = await main(process.argv);
