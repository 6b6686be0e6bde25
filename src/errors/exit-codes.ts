/**
 * The process exit codes every command and job uses; a cron monitor acts on them. OK 0, FAILURE 1
 * (some orders could not be looked up after every retry, the carrier was unreachable or failing, the
 * run broke, or the disk filled while it wrote), BAD_INPUT 2 (an option, file, key or configuration is
 * wrong, a day the calendar does not have, or a place the program writes that the system refuses;
 * nothing was spent), PARTIAL 3 (stopped early: quota spent, --max-lookups reached, interrupted; what
 * was done is committed), BUSY 4 (another process holds the warehouse), JOB_LOCKED 5 (a run of the
 * same named job is still going).
 */
export const EXIT = {
  OK: 0,
  FAILURE: 1,
  BAD_INPUT: 2,
  PARTIAL: 3,
  BUSY: 4,
  JOB_LOCKED: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The exit code of each way a run can end (the states of `RunExitState` in run-lifecycle.ts, which
 * checks this object where a run is given it); every run is given it, and its `runs` row records it.
 */
export const RUN_EXIT_CODES = {
  ok: EXIT.OK,
  partial: EXIT.PARTIAL,
  failed: EXIT.FAILURE,
  bad_input: EXIT.BAD_INPUT,
  // Stopped twice: what was done is committed, as after one stop; only what was in flight is deferred sooner.
  interrupted: EXIT.PARTIAL,
} as const satisfies Readonly<Record<string, ExitCode>>;
