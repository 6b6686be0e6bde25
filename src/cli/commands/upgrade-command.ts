import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { MIGRATIONS, SCHEMA_VERSION } from '../../warehouse/migrations.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../callback-journal-config.js';
import { UserError } from '../exit-codes.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { DB_ENV, DEFAULT_DB } from '../warehouse-location.js';

/** Brings a warehouse to this program's schema, as every command that writes to it does first. */
export function upgradeCommand(): Command {
  return new Command('upgrade')
    .description(
      "Bring the warehouse's schema to this parcel-recon's, as every command that writes to it does first; the reading commands (report, sql, export, quota) need it current.",
    )
    .option('--db <file>', `the warehouse (default: $${DB_ENV} or ${DEFAULT_DB})`)
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 the warehouse is at the current schema; 1 an upgrade failed (the warehouse is left as it was); 2 no warehouse there; 4 the warehouse is in use.',
    )
    .action(async (flags: { db?: string; json?: boolean }) => {
      const path = flags.db ?? process.env[DB_ENV] ?? DEFAULT_DB;
      if (!existsSync(path)) throw new UserError(`warehouse ${path} does not exist`);
      const warehouse = await openWarehouseForCommand(path, {}, WAREHOUSE_BUSY_WAIT_MS);
      const applied = MIGRATIONS.filter((m) => warehouse.migrationsApplied.includes(m.version));
      await warehouse.close();
      if (flags.json) {
        const summary = {
          db: path,
          schemaVersion: SCHEMA_VERSION,
          applied: applied.map(({ version, name }) => ({ version, name })),
        };
        process.stdout.write(`${JSON.stringify(summary)}\n`);
        return;
      }
      process.stdout.write(
        applied.length === 0
          ? `warehouse ${path} is at schema version ${SCHEMA_VERSION}\n`
          : `warehouse ${path} upgraded to schema version ${SCHEMA_VERSION}: ${applied.map((m) => `${m.version} (${m.name})`).join(', ')}\n`,
      );
    });
}
