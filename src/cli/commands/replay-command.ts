import { Command } from 'commander';
import { EXIT } from '../../errors/exit-codes.js';
import { type ReplaySummary, rebuildWarehouseFiles, replayRuns } from '../../pipeline/tracking/replay-runs.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { createLogger, type LogLevel, logLevelOption } from '../logger.js';
import { openWarehouseForCommand } from '../warehouse-access.js';

/** The summary as lines for a terminal. */
function replayLines(summary: ReplaySummary, dataDir: string): string[] {
  const lines: string[] = [];
  if (summary.runs.length === 0) lines.push(`no raw spool under ${dataDir}/raw: nothing replayed`);
  const loaded = summary.dryRun ? 'to load' : 'loaded';
  for (const run of summary.runs)
    lines.push(
      `run ${run.runId}: ${run.snapshots} snapshots ${loaded} from ${run.files} files, ${run.carrierErrors} carrier error answers, ${run.unreadable} unreadable`,
    );
  for (const file of summary.unreadableFiles)
    lines.push(`spool file ${file.path} cannot be read (${file.cause}): none of its answers used`);
  const plan = summary.rebuild;
  if (plan !== null) {
    lines.push(`${summary.dryRun ? 'would rebuild' : 'rebuilt'} ${plan.rebuilt} orders`);
    const kept = plan.keptWithoutAnswers + plan.keptPartlyRead;
    if (kept > 0)
      lines.push(
        `${summary.dryRun ? 'would keep' : 'kept'} ${kept} orders as they were: ${plan.keptWithoutAnswers} with no answer in a readable spool, ${plan.keptPartlyRead} with some answers in no readable spool (pruned, missing or unreadable)`,
      );
  }
  lines.push('lookups spent: 0');
  return lines;
}

/** Rebuilds the normalized tables from runs' raw spools, with no lookup. */
export function replayCommand(): Command {
  const command = new Command('replay')
    .description(
      "Load runs' raw spools (every answer body a run received) into the warehouse again, with no lookup: all spooled runs, oldest first, when none is named.",
    )
    .argument('[run...]', 'run ids to replay, in this order');
  return withSettingOptions(command, 'replay', SETTINGS)
    .option(
      '--rebuild',
      'rebuild the orders, their history rows, order_changes and the tracking rows of delivery_failures from the spools alone, beside the stored rows, and swap them in in one transaction; an order of which some answer is in no readable spool keeps its rows',
    )
    .option('--dry-run', 'read the spools and print what would be loaded or rebuilt; change nothing')
    .option('--json', 'print the summary as JSON')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      '\nExit codes: 0 replayed; 1 a spool file could not be read (the rest is replayed, the orders it may hold keep their rows); 2 bad input; 4 the warehouse is in use.',
    )
    .action(
      async (
        runIds: string[],
        flags: {
          rebuild?: boolean;
          dryRun?: boolean;
          json?: boolean;
          logLevel?: LogLevel;
        },
      ) => {
        const logger = createLogger({ level: flags.logLevel });
        const settings = await loadSettings('replay', flags, process.env);
        const dbPath = settings.values.warehouse;
        const dataDir = settings.values.dataDir;
        const dryRun = flags.dryRun ?? false;
        // A dry run reads only: it neither migrates the file nor installs the report views.
        const warehouse = await openWarehouseForCommand(
          dbPath,
          dryRun ? { readOnly: true, files: rebuildWarehouseFiles(dataDir) } : {},
        );
        let summary: ReplaySummary;
        try {
          summary = await replayRuns({
            warehouse,
            dataDir,
            runIds,
            rebuild: flags.rebuild ?? false,
            dryRun,
            logger,
          });
        } finally {
          await warehouse.close();
        }
        if (summary.unreadableFiles.length > 0) process.exitCode = EXIT.FAILURE;
        if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else process.stdout.write(`${replayLines(summary, dataDir).join('\n')}\n`);
      },
    );
}
