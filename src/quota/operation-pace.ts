import Bottleneck from 'bottleneck';
import type { OperationPace } from './operation-pace-default.js';

/** Runs requests at a pace; stopping lets those already waiting run. */
export interface PaceLimiter {
  schedule<T>(task: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

/** Bottleneck holding the pace: at most `concurrency` in flight, starts spaced by 1/rate seconds. */
export function paceLimiter(pace: OperationPace): PaceLimiter {
  const limiter = new Bottleneck({
    maxConcurrent: pace.concurrency,
    minTime: Math.ceil(1000 / pace.requestsPerSecond),
  });
  return {
    schedule: (task) => limiter.schedule(task),
    stop: () => limiter.stop({ dropWaitingJobs: false }),
  };
}
