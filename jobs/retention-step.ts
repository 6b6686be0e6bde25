import { EXIT } from '../src/errors/exit-codes.js';
import { pruneRuns } from '../src/pipeline/run-retention.js';
import type { JobContext, JobStepResult } from './job-definition.js';

/**
 * Prunes the per-run data of the runs older than the configuration's `retention.olderThan`, as
 * `prune` does; the job's own run is unfinished and so never among them.
 */
export async function retentionStep(
  context: JobContext,
  retention: { readonly olderThanDays: number },
): Promise<JobStepResult> {
  const summary = await pruneRuns({
    warehouse: context.warehouse,
    dataDir: context.settings.dataDir,
    olderThanDays: retention.olderThanDays,
    nowMs: context.now(),
    dayUtcOffsetMinutes: context.settings.dayUtcOffsetMinutes,
    dryRun: false,
  });
  context.logger.info({ ...summary }, 'pruned old runs');
  return { step: 'retention', exitState: 'ok', exitCode: EXIT.OK, summary: { ...summary } };
}
