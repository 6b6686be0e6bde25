/** The process exit codes every command uses; a cron monitor acts on them. */
export const EXIT = {
  /** Everything asked was done. */
  OK: 0,
  /** The run failed: nothing or not everything could be done, for a reason other than quota. */
  FAILURE: 1,
  /** Bad input: an option, a file or a configuration the user gave is wrong. Nothing was spent. */
  BAD_INPUT: 2,
  /** Partial: the run stopped early (quota reached, interrupted) after committing what it did. */
  PARTIAL: 3,
  /** Another run holds the warehouse or the job's lock. */
  BUSY: 4,
} as const;

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
