import { type ErrorCode, ProductError } from '../errors/product-error.js';
import type { RunExitCodes } from '../pipeline/run-lifecycle.js';

/**
 * The process exit codes every command uses; a cron monitor acts on them. OK 0, FAILURE 1 (some
 * orders could not be looked up after every retry, the carrier was unreachable or failing, the run
 * broke, or the disk filled while it wrote), BAD_INPUT 2 (an option, file, key or configuration is
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

/** The exit code of each way a run can end; every run is given it, and its `runs` row records it. */
export const RUN_EXIT_CODES: RunExitCodes = {
  ok: EXIT.OK,
  partial: EXIT.PARTIAL,
  failed: EXIT.FAILURE,
  bad_input: EXIT.BAD_INPUT,
  // Stopped twice: what was done is committed, as after one stop; only what was in flight is deferred sooner.
  interrupted: EXIT.PARTIAL,
};

/** The failures only the command line meets: its input, its ports, a report it runs, a query it is given. */
type UserErrorCode = Extract<
  ErrorCode,
  'BAD_INPUT' | 'PORT_IN_USE' | 'LISTEN_FAILED' | 'REPORT_FAILED' | 'QUERY_REFUSED'
>;

/** An error whose message is meant for the user as it is: one line, no stack trace. */
export class UserError extends ProductError {
  declare readonly code: UserErrorCode;

  constructor(message: string, code: UserErrorCode = 'BAD_INPUT') {
    super(code, message);
  }
}
