import { Command } from 'commander';
import { UserError } from '../../errors/user-error.js';
import { pruneRuns, type RetentionSummary } from '../../pipeline/run-retention.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { RETENTION_AGE_HINT, retentionDays } from '../../settings/value-types.js';
import { type CompactionResult, compactAndClose } from '../../warehouse/warehouse-compaction.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

interface PruneFlags {
  olderThan: string;
  dryRun?: boolean;
  compact?: boolean;
  json?: boolean;
}

/** The summary as lines for a terminal. */
function retentionLines(summary: RetentionSummary): string[] {
  const verb = summary.dryRun ? 'would remove' : 'removed';
  const { rows } = summary;
  return [
    `${summary.runsPruned} finished runs started before ${summary.startedBefore}${summary.unfinishedRunsKept > 0 ? `; ${summary.unfinishedRunsKept} unfinished runs kept whole` : ''}`,
    `  ${verb} lookup_results ${rows.lookup_results} rows, run_inputs ${rows.run_inputs} rows`,
    `  ${verb} quota ledger before ${summary.quotaFrom}: quota_usage ${rows.quota_usage} rows, quota_limit_answers ${rows.quota_limit_answers} rows`,
    `  ${verb} raw spool ${summary.rawSpool.folders} folders (${summary.rawSpool.bytes} bytes), rejects ${summary.rejectsFiles.files} files (${summary.rejectsFiles.bytes} bytes)`,
  ];
}

/** Removes the per-run data of old runs, and with --compact gives the freed space back to the disk. */
export function pruneCommand(): Command {
  const command = new Command('prune')
    .description(
      "Remove the raw spool, lookup_results and run_inputs rows of finished runs older than an age, and the quota ledger's older days; orders, their history, callbacks, quotes, image lists and every run's summary stay.",
    )
    .requiredOption('--older-than <age>', 'the age of the runs whose data goes, in days (e.g. 90d)');
  return withSettingOptions(command, 'prune', SETTINGS)
    .option('--dry-run', 'print what would go and change nothing')
    .option('--compact', 'then rewrite the warehouse into a new file without the freed space and swap it in')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 pruned; 1 the warehouse could not be written; 2 bad input; 4 the warehouse is in use.',
    )
    .action(async (flags: PruneFlags) => {
      const olderThanDays = retentionDays(flags.olderThan);
      if (olderThanDays === undefined) throw new UserError(`--older-than: expected ${RETENTION_AGE_HINT}`);
      const settings = await loadSettings('prune', flags, process.env);
      const dayUtcOffsetMinutes = settings.values.dayUtcOffset;
      const dbPath = settings.values.warehouse;
      const dryRun = flags.dryRun ?? false;
      // A dry run reads only: it neither migrates the file nor installs the report views.
      const warehouse = await openWarehouseForCommand(dbPath, { readOnly: dryRun }, WAREHOUSE_BUSY_WAIT_MS);
      let summary: RetentionSummary;
      let compaction: CompactionResult | undefined;
      try {
        summary = await pruneRuns({
          warehouse,
          dataDir: settings.values.dataDir,
          olderThanDays,
          nowMs: runClock(process.env)(),
          dayUtcOffsetMinutes,
          dryRun,
        });
        if (flags.compact && !dryRun) compaction = await compactAndClose(warehouse);
      } finally {
        await warehouse.close();
      }
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ warehouse: dbPath, ...summary, compaction: compaction ?? null })}\n`);
        return;
      }
      const lines = retentionLines(summary);
      if (compaction !== undefined)
        lines.push(`compacted ${dbPath}: ${compaction.bytesBefore} bytes before, ${compaction.bytesAfter} bytes after`);
      else if (flags.compact) lines.push(`would compact ${dbPath}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
