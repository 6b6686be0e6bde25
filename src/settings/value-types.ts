import { Cron } from 'croner';
import { z } from 'zod';
import { findCarrier, KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { parseShard } from '../pipeline/tracking/shard.js';

/** The value types settings share; the flags' and variables' text is turned into them before the check. */

export const positiveInt = z.number().int().positive();
export const nonNegativeInt = z.number().int().min(0);
export const httpUrl = z.url({ protocol: /^https?$/, error: 'not an http(s) URL' });

/** A flag's or a variable's text as a number; what is not one fails the type's check. */
export function numberText(text: string): number {
  return text.trim() === '' ? Number.NaN : Number(text);
}

/** A DuckDB memory size as an option or a configuration key gives it (`256MB`, `2GiB`). */
export function memoryLimitSchema(example: string) {
  return z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i, `a size such as ${example}`);
}

/** `I/N` as `--shard` and the configuration's `track.shard` write it. */
export const shardText = z
  .string()
  .regex(/^\d+\/\d+$/, 'I/N, e.g. 0/4')
  .refine((text) => {
    const { index, count } = parseShard(text);
    return count >= 1 && count <= 1024 && index < count;
  }, 'I/N with 0 <= I < N <= 1024');

/** A retention age as the command line and the configuration spell it: whole days, e.g. `90d`. */
const RETENTION_AGE = /^([1-9]\d{0,4})d$/;

export const RETENTION_AGE_HINT = 'a number of days such as 90d';

/** The days a retention age gives, or undefined when the text is not one. */
export function retentionDays(text: string): number | undefined {
  const match = RETENTION_AGE.exec(text);
  return match === null ? undefined : Number(match[1]);
}

export const retentionAge = z
  .string()
  .refine((age) => retentionDays(age) !== undefined, { message: RETENTION_AGE_HINT });

/** A cron expression (5 fields, or 6 with seconds), checked by the scheduler's own parser. */
export const cronExpression = z.string().refine(
  (pattern) => {
    try {
      new Cron(pattern, { paused: true });
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a cron expression (minute hour day-of-month month day-of-week, e.g. "0 2 * * *")' },
);

/** The id of a carrier the product knows (known-carriers.ts). */
export const knownCarrierId = z.string().refine((id) => findCarrier(id) !== undefined, {
  error: (issue) =>
    `${JSON.stringify(issue.input)} is not a carrier the product knows: give ${KNOWN_CARRIERS.map((c) => c.id).join(' or ')}`,
});
