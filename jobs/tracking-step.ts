import { trackingWarehouseOptions } from '../src/cli/tracking-memory.js';
import { trackRunCounts } from '../src/pipeline/tracking/run-summary.js';
import { runTracking } from '../src/pipeline/tracking/track-run.js';
import type { JobContext, JobStepResult } from './job-definition.js';

/** Looks up the configured source's codes within the quotas, as `track` does (with its DuckDB settings), under the job's name. */
export async function trackingStep(context: JobContext, job: string): Promise<JobStepResult> {
  const tracking = await context.settings.tracking();
  const trackingWarehouse = trackingWarehouseOptions(context.settings.trackMemoryLimit);
  const summary = await context.warehouse.withSettings(trackingWarehouse, async () => {
    // What the earlier steps wrote is still in DuckDB's memory until a checkpoint, under the job's larger limit.
    await context.warehouse.run('CHECKPOINT');
    return runTracking({
      ...tracking,
      job: `${job}-track`,
      warehouse: context.warehouse,
      stop: context.stop,
      logger: context.logger,
    });
  });
  return {
    step: 'track',
    exitState: summary.exitState,
    exitCode: summary.exitCode,
    summary: { ...summary },
    counts: trackRunCounts(summary),
  };
}
