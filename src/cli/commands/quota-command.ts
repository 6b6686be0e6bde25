import { Command } from 'commander';
import { carrierDayOf, instantToEpochMs, isCalendarDay } from '../../carriers/carrier-time.js';
import { UserError } from '../../errors/user-error.js';
import { carrierQuotaPolicy, TOTAL_ALIAS } from '../../quota/quota-policy.js';
import { formatDisplayTime } from '../../reports/display-time.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { readQuotaLimitReports, readQuotaUsage } from '../../warehouse/quota-usage-store.js';
import { CARRIER_DAY_HINT } from '../flag-check.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

/** Today's lookups per key from the ledger, against the limits. */
export function quotaCommand(): Command {
  const command = new Command('quota').description(
    "Show the carrier day's lookups per key alias from the warehouse's ledger, what is left, and the keys the carrier answered APIKEY_LIMIT for.",
  );
  return withSettingOptions(command, 'quota', SETTINGS)
    .option('--day <YYYY-MM-DD>', 'another carrier day than today')
    .option('--json', 'print JSON')
    .action(async (flags: { day?: string; json?: boolean }) => {
      const { values } = await loadSettings('quota', flags, process.env);
      const carrier = values.carrier;
      const policy = carrierQuotaPolicy(carrier, {
        perKeyDaily: values['track.perKeyLimit'],
        globalDaily: values['track.globalLimit'],
        dayUtcOffsetMinutes: values.dayUtcOffset,
      });
      if (flags.day !== undefined && !isCalendarDay(flags.day)) throw new UserError(`--day: ${CARRIER_DAY_HINT}`);
      const day = flags.day ?? carrierDayOf(runClock(process.env)(), policy.dayUtcOffsetMinutes);
      const warehouse = await openWarehouseForCommand(values.warehouse, { readOnly: true }, WAREHOUSE_BUSY_WAIT_MS);
      try {
        const usage = await readQuotaUsage(warehouse, carrier, day);
        const limitReports = await readQuotaLimitReports(warehouse, carrier, day);
        const keys = [...usage.entries()]
          .filter(([alias]) => alias !== TOTAL_ALIAS)
          .sort(([a], [b]) => a.localeCompare(b));
        const total = usage.get(TOTAL_ALIAS) ?? 0;
        // What was sent and the carrier's APIKEY_LIMIT answer are two facts: a key it refused has nothing left.
        const rows = keys.map(([alias, used]) => {
          const reportedAt = limitReports.get(alias);
          const limitReportedAt =
            reportedAt === undefined ? null : formatDisplayTime(instantToEpochMs(reportedAt), values.timeZone);
          return {
            alias,
            used,
            limit: policy.perKeyDaily,
            left: limitReportedAt === null ? Math.max(0, policy.perKeyDaily - used) : 0,
            limitReportedAt,
          };
        });
        const totals = { used: total, limit: policy.globalDaily, left: Math.max(0, policy.globalDaily - total) };
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ carrierDay: day, keys: rows, total: totals })}\n`);
          return;
        }
        process.stdout.write(`carrier day ${day}\n`);
        for (const row of rows)
          process.stdout.write(
            `  ${row.alias.padEnd(24)} ${String(row.used).padStart(9)} of ${row.limit} used, ${row.left} left${row.limitReportedAt === null ? '' : `; the carrier answered APIKEY_LIMIT at ${row.limitReportedAt}`}\n`,
          );
        process.stdout.write(
          `  ${'all keys'.padEnd(24)} ${String(totals.used).padStart(9)} of ${totals.limit} used, ${totals.left} left\n`,
        );
      } finally {
        await warehouse.close();
      }
    });
}
