import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { UserError } from '../../errors/user-error.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { memoryLimitSchema } from '../../settings/value-types.js';
import { legacySnapshotStoreOf } from '../../warehouse/parquet-snapshot.js';
import {
  EXPORT_MEMORY_LIMIT,
  exportSnapshot,
  type SnapshotExport,
  snapshotSummary,
} from '../../warehouse/parquet-snapshot-export.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

/** `export --to DIR`: the warehouse as a Parquet snapshot that readers open while a writer holds the warehouse. */
export function exportCommand(): Command {
  const command = new Command('export')
    .description(
      'Write the warehouse as a Hive-partitioned Parquet snapshot into DIR: the partitions that changed since the last export, then its manifest.',
    )
    .requiredOption(
      '--to <dir>',
      'the snapshot folder: DIR/<table>/carrier=<c>/month=<YYYY-MM>/*.parquet and DIR/manifest.json',
    );
  return withSettingOptions(command, 'export', SETTINGS)
    .option('--memory-limit <size>', "DuckDB's memory_limit for the export", EXPORT_MEMORY_LIMIT)
    .option('--json', 'print the summary as JSON')
    .action(async (flags: { to: string; memoryLimit: string; json?: boolean }) => {
      const settings = await loadSettings('export', flags, process.env);
      const memoryLimit = memoryLimitSchema(EXPORT_MEMORY_LIMIT).safeParse(flags.memoryLimit);
      if (!memoryLimit.success) throw new UserError(`--memory-limit: ${memoryLimit.error.issues[0]!.message}`);
      const exportedAt = new Date(runClock(process.env)());
      // The folders the export writes in (the second only when it replaces a link of the layout before partitions).
      const folders = [
        resolve(flags.to),
        `${resolve(flags.to)}.partial-${process.pid}`,
        legacySnapshotStoreOf(flags.to),
      ];
      // A read-only warehouse gets no spill directory of its own; what the views hold past the limit goes here.
      const spillDir = await mkdtemp(join(tmpdir(), 'parcel-recon-export-'));
      try {
        const warehouse = await openWarehouseForCommand(
          settings.values.warehouse,
          { readOnly: true, memoryLimit: memoryLimit.data, tempDirectory: spillDir, directories: folders },
          WAREHOUSE_BUSY_WAIT_MS,
        );
        let written: SnapshotExport;
        try {
          written = await exportSnapshot(warehouse, flags.to, exportedAt);
        } finally {
          await warehouse.close();
        }
        const summary = snapshotSummary(written);
        if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else
          process.stdout.write(
            `snapshot ${written.to}: ${summary.tables} tables, ${summary.views} views, schema version ${summary.schemaVersion}; ${summary.partitionsWritten} partitions written, ${summary.partitionsKept} kept\n`,
          );
      } finally {
        await rm(spillDir, { recursive: true, force: true });
      }
    });
}
