import { z } from 'zod';
import { isCalendarDay } from '../carriers/carrier-time.js';
import { describeIssues } from '../carriers/payload-validation.js';
import { UserError } from '../errors/user-error.js';

/** Checks flags against a schema; the first problem is one line naming its flag. */
export function checkFlags<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const checked = schema.safeParse(raw);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0]!;
  const key = issue.path[0];
  if (typeof key === 'string')
    throw new UserError(`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${issue.message}`);
  throw new UserError(describeIssues(checked.error.issues, 'options'));
}

/** A carrier day a flag or a configuration key names: strictly `YYYY-MM-DD`, a day the calendar has. */
export const CARRIER_DAY_HINT = 'expected a date YYYY-MM-DD that the calendar has';
export const carrierDaySchema = z.string().refine(isCalendarDay, CARRIER_DAY_HINT);
