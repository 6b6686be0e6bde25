import { trackRunCounts } from '../src/pipeline/tracking/run-summary.js';
import { runTracking } from '../src/pipeline/tracking/track-run.js';
import { trackingWarehouseOptions } from '../src/pipeline/tracking/tracking-warehouse-options.js';
import { REDIS_KEY_PREFIX } from '../src/quota/quota-limiting.js';
import { connectRedis } from '../src/quota/redis-connection.js';
import type { JobContext, JobStepResult, TrackingSettings } from './job-definition.js';

/** Another carrier the job tracks (`alsoTrack`): its step and run are named after it. */
export interface OtherCarrier {
  readonly carrier: string;
  readonly tracking: () => Promise<TrackingSettings>;
}

/**
 * Looks up the configured source's codes within the quotas, as `track` does (with its DuckDB settings),
 * under the job's name; with a Redis, as one of the workers sharing the quota through it. `other`: a
 * carrier of `alsoTrack` in place of the configured one.
 */
export async function trackingStep(context: JobContext, job: string, other?: OtherCarrier): Promise<JobStepResult> {
  const suffix = other === undefined ? '' : `-${other.carrier}`;
  const { redisUrl, ...tracking } = await (other?.tracking ?? context.settings.tracking)();
  // Connected before anything is spent: a Redis down at the start fails the step with nothing looked up.
  const redis = redisUrl === undefined ? undefined : await connectRedis(redisUrl);
  const trackingWarehouse = trackingWarehouseOptions(context.settings.trackMemoryLimit);
  try {
    const summary = await context.warehouse.withSettings(trackingWarehouse, async () => {
      // What the earlier steps wrote is still in DuckDB's memory until a checkpoint, under the job's larger limit.
      await context.warehouse.run('CHECKPOINT');
      return runTracking({
        ...tracking,
        job: `${job}-track${suffix}`,
        warehouse: context.warehouse,
        stop: context.stop,
        sharedQuota: redis && { redis, prefix: REDIS_KEY_PREFIX },
        logger: context.logger,
      });
    });
    return {
      step: `track${suffix}`,
      exitState: summary.exitState,
      exitCode: summary.exitCode,
      summary: { ...summary },
      ...(summary.carrierDown === null ? {} : { cause: summary.carrierDown }),
      counts: trackRunCounts(summary),
    };
  } finally {
    await redis?.close();
  }
}
