import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { UserError } from '../../errors/user-error.js';
import { mergedFileAccess, mergeWarehouses } from '../../warehouse/warehouse-merge.js';
import { openWarehouseForCommand } from '../warehouse-access.js';

/** Combines the warehouses of sharded workers (`track --shard I/N`) into one. */
export function mergeCommand(): Command {
  return new Command('merge')
    .description(
      "Merge warehouse files (e.g. one per `track --shard` worker) into one warehouse with DuckDB's ATTACH, idempotently.",
    )
    .argument('<files...>', 'the warehouse files to merge; each is opened read-only')
    .requiredOption('--into <warehouse>', 'the warehouse that receives the rows (created when missing)')
    .option('--dry-run', 'print what each file would bring and change nothing (the target must exist)')
    .option('--json', 'print what each file brought as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 merged; 1 a file could not be read or merged (the files before it are merged); 2 bad input; 4 the target is in use.',
    )
    .action(async (files: string[], flags: { into: string; dryRun?: boolean; json?: boolean }) => {
      for (const file of files) if (!existsSync(file)) throw new UserError(`merge: ${file} does not exist`);
      const dryRun = flags.dryRun ?? false;
      if (dryRun && !existsSync(flags.into)) throw new UserError(`merge --dry-run: ${flags.into} does not exist`);
      // A dry run reads only: the target is opened read-only, let read the files it attaches.
      const target = await openWarehouseForCommand(
        flags.into,
        dryRun ? { readOnly: true, files: files.flatMap(mergedFileAccess) } : {},
      );
      try {
        const merged = await mergeWarehouses(target, files, dryRun);
        if (flags.json)
          process.stdout.write(`${JSON.stringify({ into: flags.into, ...(dryRun ? { dryRun } : {}), merged })}\n`);
        else
          for (const file of merged)
            process.stdout.write(
              `${file.path}${dryRun ? ' would bring' : ''}: ${
                Object.entries(file.rows)
                  .filter(([, n]) => n > 0)
                  .map(([table, n]) => `${table} ${n}`)
                  .join(', ') || 'nothing new'
              }\n`,
            );
      } finally {
        await target.close();
      }
    });
}
