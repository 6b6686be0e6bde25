import { Cron } from 'croner';

/** The clock the scheduler waits on; tests pass one whose time they move. */
export interface SchedulerClock {
  now(): number;
  /** Resolves after `ms` (or when `signal` aborts). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface ScheduledJob {
  readonly job: string;
  /** A cron expression read in the carrier's time zone. */
  readonly schedule: string;
}

/** The first time strictly after `afterMs` that `schedule` names, in the zone `utcOffsetMinutes` east of UTC. */
export function nextFireTime(schedule: string, utcOffsetMinutes: number, afterMs: number): number | null {
  const next = new Cron(schedule, { paused: true, utcOffset: utcOffsetMinutes }).nextRun(new Date(afterMs));
  return next === null ? null : next.getTime();
}

/** The longest single wait: a clock that jumps (suspend, NTP) is noticed within this. */
const MAX_WAIT_MS = 60_000;

export const realClock = (now: () => number): SchedulerClock => ({
  now,
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
});

/**
 * Fires each job at the times its cron expression names, in the carrier's time zone, until `stop`
 * aborts or `maxFirings` jobs have fired. Jobs due at the same time fire one after the other; a slot
 * missed while a job ran is skipped, not caught up (the next night's run does that night's work).
 */
export async function runSchedule(options: {
  readonly jobs: readonly ScheduledJob[];
  readonly utcOffsetMinutes: number;
  readonly clock: SchedulerClock;
  readonly stop: AbortSignal;
  readonly fire: (job: string, scheduledAt: number) => Promise<void>;
  readonly onPlanned?: (job: string, at: number) => void;
  readonly maxFirings?: number;
}): Promise<number> {
  const { clock, stop, utcOffsetMinutes } = options;
  const due = new Map<string, number>();
  const plan = (entry: ScheduledJob, afterMs: number) => {
    const at = nextFireTime(entry.schedule, utcOffsetMinutes, afterMs);
    if (at === null) {
      due.delete(entry.job);
      return;
    }
    due.set(entry.job, at);
    options.onPlanned?.(entry.job, at);
  };
  for (const entry of options.jobs) plan(entry, clock.now());
  let firings = 0;
  while (!stop.aborted && due.size > 0 && firings < (options.maxFirings ?? Infinity)) {
    const nextAt = Math.min(...due.values());
    const wait = nextAt - clock.now();
    if (wait > 0) {
      await clock.sleep(Math.min(wait, MAX_WAIT_MS), stop);
      continue;
    }
    for (const entry of options.jobs) {
      if (due.get(entry.job) !== nextAt || stop.aborted) continue;
      await options.fire(entry.job, nextAt);
      firings++;
      plan(entry, Math.max(nextAt, clock.now()));
      if (firings >= (options.maxFirings ?? Infinity)) break;
    }
  }
  return firings;
}
