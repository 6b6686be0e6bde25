import { Command } from 'commander';
import { z } from 'zod';
import { ingestCallbackJournalAsGuest } from '../../callbacks/journal-ingest.js';
import { makeFolder } from '../../errors/disk-fault.js';
import { EXIT } from '../../errors/exit-codes.js';
import type { TrackRunSummary } from '../../pipeline/tracking/run-summary.js';
import { planTracking, type TrackPlan } from '../../pipeline/tracking/track-plan.js';
import { runTracking } from '../../pipeline/tracking/track-run.js';
import { trackingWarehouseOptions } from '../../pipeline/tracking/tracking-warehouse-options.js';
import { REDIS_KEY_PREFIX } from '../../quota/quota-limiting.js';
import { connectRedis, type SharedRedis } from '../../quota/redis-connection.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import { dataFolder } from '../../warehouse/data-folder.js';
import { checkFlags } from '../flag-check.js';
import { createLogger, LOG_LEVELS, logLevelOption } from '../logger.js';
import { trackProgressDisplay } from '../progress-display.js';
import { giveUpAfterInterrupt, stopOnSignals } from '../stop-signals.js';
import { trackingOptions } from '../track-run-options.js';
import { describeSummary } from '../track-summary-lines.js';
import { keepHeapSmall } from '../tracking-memory.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

/** The flags of one invocation of track; its settings are the catalog's. */
const TrackFlagsSchema = z.object({
  job: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'lower-case letters, digits and -')
    .default('track'),
  json: z.boolean().default(false),
  plan: z.boolean().default(false),
  progress: z.boolean().default(true),
  logLevel: z.enum(LOG_LEVELS).default('info'),
});

/** The process's peak resident memory so far (max RSS), in MB. */
function peakMemoryMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/**
 * After a second SIGINT/SIGTERM the run gives up its lookups in flight and finishes as interrupted,
 * in well under this; past it the process ends anyway, so that it is gone within 2 s.
 */
const INTERRUPT_GIVE_UP_MS = 1_500;

/** The plan as a person reads it. */
export function describePlan(plan: TrackPlan): string {
  const c = plan.codes;
  const line = (name: string, p: { toLookUp: number; leftToday: number; wouldSpend: number; wouldDefer: number }) =>
    `  ${name.padEnd(24)} to look up ${String(p.toLookUp).padStart(8)}, left today ${String(p.leftToday).padStart(9)}: would spend ${p.wouldSpend}, defer ${p.wouldDefer}`;
  return [
    `plan for carrier day ${plan.carrierDay} (nothing spent)${plan.maxLookups === null ? '' : `, --max-lookups ${plan.maxLookups}`}`,
    `  codes read ${c.read}, rejected ${c.rejected}, duplicates ${c.duplicate}, terminal orders skipped ${c.terminalSkipped}`,
    ...plan.keys.map((k) => line(k.alias, k)),
    line('all keys', plan.total),
    '',
  ].join('\n');
}

export function trackCommand(): Command {
  const command = new Command('track').description(
    "Look order codes up through the carrier's tracking API within the daily quotas and load the results into the warehouse.",
  );
  return withSettingOptions(command, 'track', SETTINGS)
    .option('--job <name>', 'job name recorded with the run (default: track)')
    .option(
      '--plan',
      'print what a run would spend per key against what is left today, and spend nothing (with --json: as JSON)',
    )
    .option('--json', 'print the summary as JSON on stdout')
    .option('--no-progress', 'no progress bar, even on a terminal')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      `
Exit codes: 0 done, every code got a result or an answer about the order (ORDERCODE_NOT_FOUND, ...);
1 some orders failed for good (EXCEPTION or a transport failure after every retry; listed in the summary
and lookup_results), the carrier does not know a key (its orders deferred as key_not_found), or the carrier
is unreachable or failing (--breaker-attempts in a row without an answer: the orders left deferred as carrier_down);
2 bad input (nothing spent); 3 partial: quota spent, --max-lookups reached or stopped (committed work is kept;
a second SIGINT/SIGTERM gives up the lookups in flight at once and the run ends interrupted);
4 the warehouse is in use by another process. With --redis: Redis down at the start is exit 1 (nothing spent);
Redis lost during the run stops the lookups, commits what is done and exits 3.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(TrackFlagsSchema, raw);
      const logger = createLogger({ level: flags.logLevel });
      const settings = await loadSettings('track', raw, process.env);
      const { redisUrl, ...tracking } = await trackingOptions(settings, process.env, logger, {
        wording: 'command',
        plan: flags.plan,
      });
      const options = { ...tracking, job: flags.job };
      const dbPath = settings.values.warehouse;
      keepHeapSmall();
      const warehouse = await openWarehouseForCommand(
        dbPath,
        trackingWarehouseOptions(settings.values['track.memoryLimit']),
        WAREHOUSE_BUSY_WAIT_MS,
      );
      if (flags.plan) {
        try {
          const plan = await planTracking({ ...options, warehouse });
          process.stdout.write(flags.json ? `${JSON.stringify(plan)}\n` : describePlan(plan));
        } finally {
          await warehouse.close();
        }
        return;
      }
      const redis =
        redisUrl === undefined || flags.plan ? undefined : await connectRedisForCommand(redisUrl, warehouse);
      const signals = stopOnSignals({ interruptible: true });
      giveUpAfterInterrupt(signals.interrupt, INTERRUPT_GIVE_UP_MS, {
        exitCode: EXIT.PARTIAL,
        line: 'parcel-recon: interrupted: ended before its run finished; committed work is kept and the next track resumes the run',
        // A statement under way (the work list's selection, a commit) would hold the exit until it ends.
        before: () => warehouse.interrupt(),
      });
      let summary: TrackRunSummary;
      try {
        // A data folder that cannot be written ends the command before anything is loaded or spent.
        await makeFolder(dataFolder(options.dataDir).spool);
        // The status callbacks journaled since the last run come in first: a terminal one spares a lookup.
        // A journal that cannot be loaded stays for the next load; the run goes on.
        const journalDir = settings.values.callbackJournal;
        await ingestCallbackJournalAsGuest(warehouse, journalDir, {
          spoolDir: dataFolder(options.dataDir).callbackSpool,
          logger,
        }).catch((error: unknown) =>
          logger.error(
            { journalDir, error: error instanceof Error ? error.message : String(error) },
            'callback journal not loaded',
          ),
        );
        summary = await runTracking({
          ...options,
          warehouse,
          stop: signals.signal,
          interrupt: signals.interrupt,
          sharedQuota: redis && { redis, prefix: REDIS_KEY_PREFIX },
          progress: trackProgressDisplay(logger, flags.progress),
        });
      } finally {
        signals.dispose();
        await redis?.close();
        await warehouse.close();
      }
      // Once the warehouse is closed, its last checkpoint included: what the run needed at most.
      const printed = { ...summary, peakMemoryMb: peakMemoryMb() };
      process.stdout.write(flags.json ? `${JSON.stringify(printed)}\n` : describeSummary(printed, dbPath));
      if (summary.carrierDown !== null) process.stderr.write(`parcel-recon: ${summary.carrierDown}\n`);
      process.exitCode = summary.exitCode;
    });
}

/** Redis down at the start: the warehouse is closed, nothing was spent. */
async function connectRedisForCommand(url: string, warehouse: { close(): Promise<void> }): Promise<SharedRedis> {
  try {
    return await connectRedis(url);
  } catch (error) {
    await warehouse.close();
    throw error;
  }
}
