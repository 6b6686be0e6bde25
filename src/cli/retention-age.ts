/** A retention age as the command line and the configuration spell it: whole days, e.g. `90d`. */
const RETENTION_AGE = /^([1-9]\d{0,4})d$/;

export const RETENTION_AGE_HINT = 'a number of days such as 90d';

/** The days a retention age gives, or undefined when the text is not one. */
export function retentionDays(text: string): number | undefined {
  const match = RETENTION_AGE.exec(text);
  return match === null ? undefined : Number(match[1]);
}
