import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { mergeWarehouses } from '../../warehouse/warehouse-merge.js';
import { UserError } from '../exit-codes.js';
import { openWarehouseForCommand } from '../warehouse-access.js';

/** Combines the warehouses of sharded workers (`track --shard I/N`) into one. */
export function mergeCommand(): Command {
  return new Command('merge')
    .description(
      "Merge warehouse files (e.g. one per `track --shard` worker) into one warehouse with DuckDB's ATTACH, idempotently.",
    )
    .argument('<files...>', 'the warehouse files to merge; each is opened read-only')
    .requiredOption('--into <warehouse>', 'the warehouse that receives the rows (created when missing)')
    .option('--json', 'print what each file brought as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 merged; 1 a file could not be read or merged (the files before it are merged); 2 bad input; 4 the target is in use.',
    )
    .action(async (files: string[], flags: { into: string; json?: boolean }) => {
      for (const file of files) if (!existsSync(file)) throw new UserError(`merge: ${file} does not exist`);
      const target = await openWarehouseForCommand(flags.into);
      try {
        const merged = await mergeWarehouses(target, files);
        if (flags.json) process.stdout.write(`${JSON.stringify({ into: flags.into, merged })}\n`);
        else
          for (const file of merged)
            process.stdout.write(
              `${file.path}: ${
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
