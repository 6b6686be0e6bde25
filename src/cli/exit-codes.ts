import { EXIT_CODE } from '../pipeline/exit-codes.js';

/**
 * The process exit codes every command uses; a cron monitor acts on them. OK 0, FAILURE 1 (some
 * orders could not be looked up after every retry, or the run broke), BAD_INPUT 2 (an option, file,
 * key or configuration is wrong; nothing was spent), PARTIAL 3 (stopped early: quota spent,
 * --max-lookups reached, interrupted; what was done is committed), BUSY 4 (another process holds the
 * warehouse), JOB_LOCKED 5 (a run of the same named job is still going).
 */
export const EXIT = EXIT_CODE;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error whose message is meant for the user as it is: one line, no stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.BAD_INPUT,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
