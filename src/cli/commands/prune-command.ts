import { Command } from 'commander';
import { CARRIER_UTC_OFFSET_MINUTES } from '../../carrier/contract.js';
import { UserError } from '../../errors/user-error.js';
import { pruneRuns, type RetentionSummary } from '../../pipeline/run-retention.js';
import { defaultDataDir } from '../../warehouse/data-folder.js';
import { type CompactionResult, compactAndClose } from '../../warehouse/warehouse-compaction.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../callback-journal-config.js';
import { RETENTION_AGE_HINT, retentionDays } from '../retention-age.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { DB_ENV, DEFAULT_DB } from '../warehouse-location.js';

interface PruneFlags {
  olderThan: string;
  db?: string;
  dataDir?: string;
  dayUtcOffset?: string;
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

function parseDayUtcOffset(text: string | undefined): number {
  if (text === undefined) return CARRIER_UTC_OFFSET_MINUTES;
  const minutes = Number(text);
  if (!Number.isInteger(minutes) || minutes < -720 || minutes > 840)
    throw new UserError('--day-utc-offset: expected whole minutes from -720 to 840');
  return minutes;
}

/** Removes the per-run data of old runs, and with --compact gives the freed space back to the disk. */
export function pruneCommand(): Command {
  return new Command('prune')
    .description(
      "Remove the raw spool, lookup_results and run_inputs rows of finished runs older than an age, and the quota ledger's older days; orders, their history, callbacks, quotes, image lists and every run's summary stay.",
    )
    .requiredOption('--older-than <age>', 'the age of the runs whose data goes, in days (e.g. 90d)')
    .option('--db <file>', `the warehouse (default: $${DB_ENV} or ${DEFAULT_DB})`)
    .option('--data-dir <dir>', "where the raw spool and rejects files are (default: the warehouse's folder)")
    .option('--day-utc-offset <minutes>', "UTC offset of the carrier day's midnight (default: 420, UTC+07:00)")
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
      const dayUtcOffsetMinutes = parseDayUtcOffset(flags.dayUtcOffset);
      const dbPath = flags.db ?? process.env[DB_ENV] ?? DEFAULT_DB;
      const dryRun = flags.dryRun ?? false;
      // A dry run reads only: it neither migrates the file nor installs the report views.
      const warehouse = await openWarehouseForCommand(dbPath, { readOnly: dryRun }, WAREHOUSE_BUSY_WAIT_MS);
      let summary: RetentionSummary;
      let compaction: CompactionResult | undefined;
      try {
        summary = await pruneRuns({
          warehouse,
          dataDir: flags.dataDir ?? defaultDataDir(dbPath),
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
