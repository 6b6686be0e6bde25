import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { UserError } from '../../errors/user-error.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import {
  MIGRATIONS,
  type Migration,
  pendingMigrations,
  SCHEMA_VERSION,
  type UpgradeRoom,
  upgradeRoom,
} from '../../warehouse/migrations.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

const stepsOf = (migrations: readonly Migration[]) => migrations.map(({ version, name }) => ({ version, name }));
const stepList = (migrations: readonly Migration[]) => migrations.map((m) => `${m.version} (${m.name})`).join(', ');
const inMb = (bytes: number) => Math.ceil(bytes / (1024 * 1024));
/** What a step that copies every table needs of the file system, said before it starts. */
const roomLine = (room: UpgradeRoom | undefined) =>
  room === undefined
    ? ''
    : `; it copies every table before it drops the old one: needs ${inMb(room.neededBytes)} MB free, ${inMb(room.freeBytes)} MB are`;

/** Brings a warehouse to this program's schema, as every command that writes to it does first. */
export function upgradeCommand(): Command {
  const command = new Command('upgrade').description(
    "Bring the warehouse's schema to this parcel-recon's, as every command that writes to it does first, all pending steps in one transaction; the reading commands (report, sql, export, quota) need it current.",
  );
  return withSettingOptions(command, 'upgrade', SETTINGS)
    .option('--dry-run', 'list the pending schema steps and change nothing')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 the warehouse is at the current schema (with --dry-run: the pending steps are listed, with the free room a step that copies every table needs); 1 an upgrade failed, or its file system has less free room than it needs (the warehouse is left as it was); 2 no warehouse there; 4 the warehouse is in use.',
    )
    .action(async (flags: { dryRun?: boolean; json?: boolean }) => {
      const path = (await loadSettings('upgrade', flags, process.env)).values.warehouse;
      if (!existsSync(path)) throw new UserError(`warehouse ${path} does not exist`);
      if (flags.dryRun) {
        const warehouse = await openWarehouseForCommand(
          path,
          { readOnly: true, olderSchema: true },
          WAREHOUSE_BUSY_WAIT_MS,
        );
        let pending: Migration[];
        let room: UpgradeRoom | undefined;
        try {
          pending = await warehouse.exclusive(() => pendingMigrations(warehouse.connection, path));
          room = await warehouse.exclusive(() => upgradeRoom(warehouse.connection, path, pending));
        } finally {
          await warehouse.close();
        }
        if (flags.json)
          process.stdout.write(
            `${JSON.stringify({ db: path, schemaVersion: SCHEMA_VERSION, dryRun: true, pending: stepsOf(pending), ...(room === undefined ? {} : { room }) })}\n`,
          );
        else
          process.stdout.write(
            pending.length === 0
              ? `warehouse ${path} is at schema version ${SCHEMA_VERSION}: nothing to upgrade\n`
              : `warehouse ${path} would be upgraded to schema version ${SCHEMA_VERSION}: ${stepList(pending)}${roomLine(room)}\n`,
          );
        return;
      }
      const warehouse = await openWarehouseForCommand(path, {}, WAREHOUSE_BUSY_WAIT_MS);
      const applied = MIGRATIONS.filter((m) => warehouse.migrationsApplied.includes(m.version));
      await warehouse.close();
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ db: path, schemaVersion: SCHEMA_VERSION, applied: stepsOf(applied) })}\n`,
        );
        return;
      }
      process.stdout.write(
        applied.length === 0
          ? `warehouse ${path} is at schema version ${SCHEMA_VERSION}\n`
          : `warehouse ${path} upgraded to schema version ${SCHEMA_VERSION}: ${stepList(applied)}\n`,
      );
    });
}
