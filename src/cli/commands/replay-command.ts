import { dirname } from 'node:path';
import { Command } from 'commander';
import { replayRuns } from '../../pipeline/tracking/replay-runs.js';
import { createLogger, type LogLevel, logLevelOption } from '../logger.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { DB_ENV, DEFAULT_DB } from '../warehouse-location.js';

/** Rebuilds the normalized tables from runs' raw spools, with no lookup. */
export function replayCommand(): Command {
  return new Command('replay')
    .description(
      "Load runs' raw spools (every answer body a run received) into the warehouse again, with no lookup: all spooled runs, oldest first, when none is named.",
    )
    .argument('[run...]', 'run ids to replay, in this order')
    .option('--db <file>', `the warehouse (default: $${DB_ENV} or ${DEFAULT_DB})`)
    .option('--data-dir <dir>', "where the runs' raw spools are, under raw/RUN_ID/ (default: the warehouse's folder)")
    .option(
      '--rebuild',
      'empty the orders, their history rows, order_changes and the tracking rows of delivery_failures first, so they come from the spools alone',
    )
    .option('--json', 'print the summary as JSON')
    .addOption(logLevelOption())
    .action(
      async (
        runIds: string[],
        flags: { db?: string; dataDir?: string; rebuild?: boolean; json?: boolean; logLevel?: LogLevel },
      ) => {
        const logger = createLogger({ level: flags.logLevel });
        const dbPath = flags.db ?? process.env[DB_ENV] ?? DEFAULT_DB;
        const dataDir = flags.dataDir ?? dirname(dbPath);
        const warehouse = await openWarehouseForCommand(dbPath);
        try {
          const summary = await replayRuns({
            warehouse,
            dataDir,
            runIds,
            rebuild: flags.rebuild ?? false,
            logger,
          });
          if (flags.json) {
            process.stdout.write(`${JSON.stringify(summary)}\n`);
            return;
          }
          if (summary.runs.length === 0) process.stdout.write(`no raw spool under ${dataDir}/raw: nothing replayed\n`);
          for (const run of summary.runs) {
            process.stdout.write(
              `run ${run.runId}: ${run.snapshots} snapshots loaded from ${run.files} files, ${run.carrierErrors} carrier error answers, ${run.unreadable} unreadable\n`,
            );
          }
          process.stdout.write('lookups spent: 0\n');
        } finally {
          await warehouse.close();
        }
      },
    );
}
