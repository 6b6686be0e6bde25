import { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_CARRIER_ID } from '../../carriers/known-carriers.js';
import { UserError } from '../../errors/user-error.js';
import { type DepositImportSummary, importBankDeposits } from '../../pipeline/bank-deposit-import.js';
import { importPayoutStatement, type PayoutImportSummary } from '../../pipeline/payout-import.js';
import type { RejectedInput } from '../../pipeline/rejects-file.js';
import { SETTINGS, type Settings } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import type { ResolvedSettings } from '../../settings/resolve-settings.js';
import { type PayoutLayout, payoutLayout, TEMPLATE_LAYOUTS } from '../../sources/payout-layouts.js';
import { isWorkbook, tableFile } from '../../sources/table-rows.js';
import { checkFlags } from '../flag-check.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

const ImportFlagsSchema = z.object({
  sheet: z.string().min(1).optional(),
  dryRun: z.boolean().optional(),
  json: z.boolean().optional(),
});

/**
 * The carrier and layout of an import: the layout named (a template, or one of the configuration's),
 * else the carrier's template; the carrier named, else the layout's, else 247Express.
 */
export function chooseLayout(settings: ResolvedSettings<Settings>): { carrier: string; layout: PayoutLayout } {
  const own = settings.values['payouts.layouts'];
  const taken = Object.keys(own).find((name) => TEMPLATE_LAYOUTS.has(name));
  if (taken !== undefined)
    throw new UserError(`payouts.layouts.${taken}: ${taken} is the name of a template; give your layout another name`);
  const named = settings.values['payouts.layout'];
  const carrierNamed = settings.values['payouts.carrier'];
  if (named === undefined) {
    // A carrier's statements are read with its template unless a layout is named.
    const carrier = carrierNamed ?? DEFAULT_CARRIER_ID;
    const template = TEMPLATE_LAYOUTS.get(carrier);
    if (template === undefined) throw new UserError(`${carrier} has no statement template: name a layout`);
    return { carrier, layout: payoutLayout(carrier, template) };
  }
  const template = TEMPLATE_LAYOUTS.get(named);
  const config = template ?? own[named];
  if (config === undefined)
    throw new UserError(
      `layout ${named}: no such layout; the layouts are ${[...TEMPLATE_LAYOUTS.keys(), ...Object.keys(own)].join(', ')}`,
    );
  if (template !== undefined && carrierNamed !== undefined && carrierNamed !== named)
    throw new UserError(`layout ${named} is the template of ${named}'s statements, not of ${carrierNamed}'s`);
  return { carrier: carrierNamed ?? config.carrier ?? DEFAULT_CARRIER_ID, layout: payoutLayout(named, config) };
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The one-line summary, then the first rejections, each `FILE:LINE: reason`. */
export function describePayoutImport(
  file: string,
  carrier: string,
  layout: string,
  summary: PayoutImportSummary,
): string {
  const would = summary.dryRun ? 'would be ' : '';
  const counts = [
    plural(summary.linesRead, 'line read', 'lines read'),
    `${summary.imported} ${would}imported`,
    `${summary.unchanged} unchanged`,
    `${plural(summary.batchesReplaced, 'batch', 'batches')} ${would}replaced (${plural(summary.linesReplaced, 'line', 'lines')} to history)`,
    `${summary.rejected} rejected`,
  ];
  const head = `${summary.dryRun ? 'dry run, nothing changed: ' : ''}payouts ${file} (${carrier}, layout ${layout}): ${counts.join(', ')}${summary.rejectsFile === null ? '' : `; rejects ${summary.rejectsFile}`}`;
  return [head, ...rejectionLines(summary)].join('\n');
}

/** The first rejections of an import, each `FILE:LINE: reason`, and how many more there are. */
function rejectionLines(summary: { rejected: number; rejections: readonly RejectedInput[] }): string[] {
  const more = summary.rejected - summary.rejections.length;
  return [...summary.rejections.map((r) => `  ${r.origin}: ${r.reason}`), ...(more > 0 ? [`  and ${more} more`] : [])];
}

function importCommand(): Command {
  const command = new Command('import')
    .description(
      "Load a carrier's payout statement (CSV or .xlsx): batches, orders, COD collected, fees withheld, debts, net paid. Importing it again changes nothing; a corrected statement replaces its batches, keeping the lines it replaced in payout_line_history.",
    )
    .argument('<file>', 'the statement: a CSV, or an .xlsx workbook');
  return withSettingOptions(command, 'payouts import', SETTINGS)
    .option('--sheet <name>', 'the sheet of an .xlsx statement (default: the first)')
    .option('--dry-run', 'read the statement and print what would change; change nothing')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 imported (rejected lines are in the rejects file); 2 bad input (a header that does not fit the layout: nothing imported); 4 the warehouse is in use.',
    )
    .action(async (file: string, raw: Record<string, unknown>) => {
      const flags = checkFlags(ImportFlagsSchema, raw);
      const settings = await loadSettings('payouts import', raw, process.env);
      const { carrier, layout } = chooseLayout(settings);
      if (flags.sheet !== undefined && !isWorkbook(file))
        throw new UserError('--sheet: names a sheet of an .xlsx statement');
      const dryRun = flags.dryRun ?? false;
      const nowMs = runClock(process.env)();
      // A dry run reads only: it neither migrates the file nor installs the report views.
      const warehouse = await openWarehouseForCommand(
        settings.values.warehouse,
        { readOnly: dryRun },
        WAREHOUSE_BUSY_WAIT_MS,
      );
      let summary: PayoutImportSummary;
      try {
        summary = await importPayoutStatement({
          warehouse,
          source: tableFile(file, { sheet: flags.sheet }),
          carrier,
          layout,
          dataDir: settings.values.dataDir,
          nowMs,
          dryRun,
        });
      } finally {
        await warehouse.close();
      }
      process.stdout.write(
        flags.json
          ? `${JSON.stringify({ file, carrier, layout: layout.name, ...summary })}\n`
          : `${describePayoutImport(file, carrier, layout.name, summary)}\n`,
      );
    });
}

/** The deposits summary: one line, then the first rejections, each `FILE:LINE: reason`. */
function describeDepositImport(file: string, summary: DepositImportSummary): string {
  const would = summary.dryRun ? 'would be ' : '';
  const head = `${summary.dryRun ? 'dry run, nothing changed: ' : ''}deposits ${file}: ${plural(summary.read, 'row read', 'rows read')}, ${summary.added} ${would}added, ${summary.unchanged} unchanged, ${summary.rejected} rejected${summary.rejectsFile === null ? '' : `; rejects ${summary.rejectsFile}`}`;
  return [head, ...rejectionLines(summary)].join('\n');
}

function depositsCommand(): Command {
  const command = new Command('deposits')
    .description(
      "Load the carrier's deposits to the shop's bank account (a bank export, CSV or .xlsx: date, amount, reference), which report cod matches with the payout batches. A deposit stored already changes nothing.",
    )
    .argument('<file>', 'the bank export: a CSV, or an .xlsx workbook');
  return withSettingOptions(command, 'payouts deposits', SETTINGS)
    .option('--sheet <name>', 'the sheet of an .xlsx export (default: the first)')
    .option('--dry-run', 'read the export and print what would change; change nothing')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 imported (rejected rows are in the rejects file); 2 bad input (a header without a date, an amount or a reference: nothing imported); 4 the warehouse is in use.',
    )
    .action(async (file: string, raw: Record<string, unknown>) => {
      const flags = checkFlags(ImportFlagsSchema, raw);
      const settings = await loadSettings('payouts deposits', raw, process.env);
      if (flags.sheet !== undefined && !isWorkbook(file))
        throw new UserError('--sheet: names a sheet of an .xlsx export');
      const dryRun = flags.dryRun ?? false;
      const warehouse = await openWarehouseForCommand(
        settings.values.warehouse,
        { readOnly: dryRun },
        WAREHOUSE_BUSY_WAIT_MS,
      );
      let summary: DepositImportSummary;
      try {
        summary = await importBankDeposits({
          warehouse,
          source: tableFile(file, { sheet: flags.sheet }),
          dataDir: settings.values.dataDir,
          nowMs: runClock(process.env)(),
          dryRun,
        });
      } finally {
        await warehouse.close();
      }
      process.stdout.write(
        flags.json ? `${JSON.stringify({ file, ...summary })}\n` : `${describeDepositImport(file, summary)}\n`,
      );
    });
}

export function payoutsCommand(): Command {
  return new Command('payouts')
    .description(
      "Carriers' COD payout statements, and their deposits to the shop's bank account: import them into the warehouse.",
    )
    .addCommand(importCommand().exitOverride())
    .addCommand(depositsCommand().exitOverride());
}
