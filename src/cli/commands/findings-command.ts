import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import { carrierDayOf, formatCarrierDateTime } from '../../carriers/carrier-time.js';
import { DEFAULT_CARRIER_ID } from '../../carriers/known-carriers.js';
import { UserError } from '../../errors/user-error.js';
import {
  commandLineMark,
  findingName,
  type MarkingSummary,
  markCodFindings,
  reportRowMarks,
} from '../../reports/cod-finding-marks.js';
import { partnerFile } from '../../reports/partner-records.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { PAYOUT_CARRIERS, payoutCarrierId } from '../../sources/payout-layouts.js';
import { isWorkbook, tableFile } from '../../sources/table-rows.js';
import { FINDING_MARK_KINDS, findingMarksQuery } from '../../warehouse/finding-mark-store.js';
import { codRulesOf } from '../cod-rules.js';
import { checkFlags } from '../flag-check.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

/** The flags of marking, either way: who marks, the report's rules, the shop's records, a dry run. */
const MarkingFlagsSchema = z.object({
  by: z.string().trim().min(1, 'a name').optional(),
  partner: z.string().min(1).optional(),
  partnerSheet: z.string().min(1).optional(),
  dryRun: z.boolean().optional(),
  json: z.boolean().optional(),
});

const MarkFlagsSchema = MarkingFlagsSchema.extend({
  check: z.string().min(1),
  carrier: payoutCarrierId.default(DEFAULT_CARRIER_ID),
  batch: z.string().trim().min(1, 'a batch id').optional(),
  order: z.string().trim().min(1, 'an order code').optional(),
  as: z.enum(FINDING_MARK_KINDS),
  note: z.string().trim().min(1, 'a note saying why'),
});

const ImportFlagsSchema = MarkingFlagsSchema.extend({ sheet: z.string().min(1).optional() });

/** Who marks: --by, else the user the command runs as. */
function markerOf(by: string | undefined): string {
  if (by !== undefined) return by;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** The flags both ways of marking take: the finding is looked for as `report cod` with them finds it. */
function withMarkingOptions(command: Command): Command {
  return withSettingOptions(command, 'findings', SETTINGS)
    .option('--by <name>', 'who marks (default: the user the command runs as)')
    .option(
      '--partner <file>',
      "the shop's own records (CSV or .xlsx), as report cod reads them: for shop_cod findings",
    )
    .option('--partner-sheet <name>', 'the sheet of an .xlsx --partner file (default: the first)')
    .option('--dry-run', 'check the marks and print what would change; change nothing')
    .option('--json', 'print the summary as JSON');
}

function describeMarking(summary: MarkingSummary): string {
  const would = summary.dryRun ? 'would be ' : '';
  const head = `${summary.dryRun ? 'dry run, nothing changed: ' : ''}findings: ${summary.marked} ${would}marked, ${summary.replaced} ${would}marked again (the marks replaced kept in the history), ${summary.unchanged} unchanged${summary.blank > 0 ? `, ${summary.blank} rows without a mark left as they are` : ''}, ${summary.rejected} rejected`;
  return [head, ...summary.rejections.map((r) => `  ${r.origin}: ${r.reason}`)].join('\n');
}

/**
 * Opens the warehouse (read-only for a dry run), marks the findings `items` asks for, prints the
 * summary. A command-line mark that was rejected ends the command as a user's mistake, in one line.
 */
async function runMarking(
  raw: Record<string, unknown>,
  flags: z.output<typeof MarkingFlagsSchema>,
  items: Parameters<typeof markCodFindings>[0]['items'],
  single: boolean,
): Promise<void> {
  const settings = await loadSettings('findings', raw, process.env);
  const rules = codRulesOf(settings);
  if (flags.partnerSheet !== undefined && (flags.partner === undefined || !isWorkbook(flags.partner)))
    throw new UserError('--partner-sheet: names a sheet of an .xlsx --partner file');
  const shopRecords = flags.partner === undefined ? undefined : partnerFile(flags.partner, flags.partnerSheet);
  const dryRun = flags.dryRun ?? false;
  const nowMs = runClock(process.env)();
  // A dry run opens the warehouse read-only, confined as a report is: to a folder of its own for the
  // temporary tables of the checks, and the shop's CSV that DuckDB reads itself.
  const spillDir = await mkdtemp(join(tmpdir(), 'parcel-recon-findings-'));
  let summary: MarkingSummary;
  try {
    const warehouse = await openWarehouseForCommand(
      settings.values.warehouse,
      dryRun
        ? {
            readOnly: true,
            tempDirectory: spillDir,
            directories: [spillDir],
            files: shopRecords?.kind === 'csv' ? [shopRecords.file] : [],
          }
        : {},
      WAREHOUSE_BUSY_WAIT_MS,
    );
    try {
      summary = await markCodFindings({
        warehouse,
        items,
        now: { rules, today: carrierDayOf(nowMs), shopRecords },
        markedBy: markerOf(flags.by),
        nowMs,
        dryRun,
      });
    } finally {
      await warehouse.close();
    }
  } finally {
    await rm(spillDir, { recursive: true, force: true });
  }
  if (single && summary.rejections[0] !== undefined) throw new UserError(summary.rejections[0].reason);
  process.stdout.write(flags.json ? `${JSON.stringify(summary)}\n` : `${describeMarking(summary)}\n`);
}

function markCommand(): Command {
  const command = new Command('mark')
    .description(
      'Mark one COD finding disputed or settled (or open again), with a note. The finding is named by what it is: its check, carrier, and its order, batch or both as the check has them. A settled finding stays in later cod reports, its money no longer at stake.',
    )
    .requiredOption('--check <name>', 'the check that flags it (the finding column of report cod)')
    .option('--carrier <name>', `the carrier: ${PAYOUT_CARRIERS.join(', ')}`, DEFAULT_CARRIER_ID)
    .option('--batch <id>', 'its batch (a check of a batch or of a line)')
    .option('--order <code>', 'its order (a check of an order or of a line)')
    .addOption(new Option('--as <mark>', 'the mark').choices([...FINDING_MARK_KINDS]).makeOptionMandatory())
    .requiredOption('--note <text>', 'why: the claim, the carrier’s answer, the refund');
  return withMarkingOptions(command)
    .addHelpText(
      'after',
      '\nExit codes: 0 marked; 2 bad input (no such finding, a finding named by what its check does not have); 4 the warehouse is in use.',
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(MarkFlagsSchema, raw);
      const request = commandLineMark({ ...flags, mark: flags.as });
      await runMarking(raw, flags, [{ kind: 'mark', request }], true);
    });
}

function importCommand(): Command {
  const command = new Command('import')
    .description(
      "Mark the COD findings of a cod report's own rows read back (its CSV, or its workbook's cod sheet), each with the mark and mark_note columns filled in: disputed, settled or open. A row with no mark leaves its finding as it is; a row naming no finding the report finds now is rejected with its line.",
    )
    .argument('<file>', 'the cod report file: the CSV, or the .xlsx workbook');
  return withMarkingOptions(command)
    .option('--sheet <name>', 'the sheet of a workbook (default: cod)')
    .addHelpText(
      'after',
      '\nExit codes: 0 read (rejected rows are listed); 2 bad input (a file without the finding and mark columns: nothing marked); 4 the warehouse is in use.',
    )
    .action(async (file: string, raw: Record<string, unknown>) => {
      const flags = checkFlags(ImportFlagsSchema, raw);
      if (flags.sheet !== undefined && !isWorkbook(file))
        throw new UserError('--sheet: names a sheet of an .xlsx file');
      const source = tableFile(file, { sheet: flags.sheet ?? (isWorkbook(file) ? 'cod' : undefined) });
      await runMarking(raw, flags, reportRowMarks(source), false);
    });
}

const ListFlagsSchema = z.object({ history: z.boolean().optional(), json: z.boolean().optional() });

function listCommand(): Command {
  const command = new Command('list').description(
    'List the marks of COD findings: mark, note, who and when, the money at stake when marked.',
  );
  return withSettingOptions(command, 'findings', SETTINGS)
    .option('--history', 'also the marks replaced since, each with when it was replaced')
    .option('--json', 'print one JSON object per mark')
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(ListFlagsSchema, raw);
      const settings = await loadSettings('findings', raw, process.env);
      const warehouse = await openWarehouseForCommand(
        settings.values.warehouse,
        { readOnly: true },
        WAREHOUSE_BUSY_WAIT_MS,
      );
      let rows: Record<string, unknown>[];
      try {
        rows = (
          await warehouse.readAll(
            `SELECT * REPLACE (epoch_ms(marked_at) AS marked_at, epoch_ms(replaced_at) AS replaced_at)
             FROM (${findingMarksQuery(flags.history ?? false)})`,
          )
        ).getRowObjectsJS();
      } finally {
        await warehouse.close();
      }
      const time = (ms: unknown) => (ms === null ? null : formatCarrierDateTime(Number(ms)));
      for (const r of rows) {
        const mark = {
          finding: String(r.finding),
          carrier: String(r.carrier),
          batchId: String(r.batch_id),
          orderCode: String(r.order_code),
          mark: String(r.mark),
          note: String(r.note),
          markedBy: String(r.marked_by),
          markedAt: time(r.marked_at),
          atStake: Number(r.at_stake),
          origin: String(r.origin),
          replacedAt: time(r.replaced_at),
        };
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(mark)}\n`
            : `${findingName(mark)}: ${mark.mark} ${mark.markedAt} by ${mark.markedBy}, ${mark.atStake} VND at stake: ${mark.note}${mark.replacedAt === null ? '' : ` (replaced ${mark.replacedAt})`}\n`,
        );
      }
    });
}

/** `findings mark|import|list`: finance's marks on the findings of the cod report. */
export function findingsCommand(): Command {
  return new Command('findings')
    .description('Mark COD findings disputed or settled, with a note; later cod reports show each mark.')
    .addCommand(markCommand().exitOverride())
    .addCommand(importCommand().exitOverride())
    .addCommand(listCommand().exitOverride());
}
