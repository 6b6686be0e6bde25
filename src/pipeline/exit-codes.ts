/** Exit codes of a run and of the command line, the ones a cron monitor acts on. */
export const EXIT_CODE = {
  OK: 0,
  FAILURE: 1,
  BAD_INPUT: 2,
  PARTIAL: 3,
  BUSY: 4,
  /** A named job's lock is held by a run still going. */
  JOB_LOCKED: 5,
} as const;

export type RunExitCode = (typeof EXIT_CODE)[keyof typeof EXIT_CODE];
