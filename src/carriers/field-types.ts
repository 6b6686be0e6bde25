import { z } from 'zod';
import { type CarrierInstant, parseCarrierInstant } from './carrier-time.js';
import { type Money, moneyFromNumber } from './money.js';

/** A carrier date-time (see parseCarrierInstant), handed on as a UTC CarrierInstant. */
export const carrierDateTime = z.string().transform((text, ctx): CarrierInstant => {
  const instant = parseCarrierInstant(text);
  if (instant === undefined) {
    ctx.issues.push({ code: 'custom', message: `not a date-time: ${JSON.stringify(text.slice(0, 40))}`, input: text });
    return z.NEVER;
  }
  return instant;
});

/** A money amount: a JSON number, handed on as an exact decimal string. */
export const money = z
  .number()
  .refine(Number.isFinite, 'not a finite number')
  .transform((value): Money => moneyFromNumber(value));

/** A weight, dimension or count the carrier sends as a number. */
export const measure = z.number().refine(Number.isFinite, 'not a finite number');

/**
 * An array the carrier may send as `null` (nulls are sent explicitly), read as an empty array.
 */
export function listOrNull<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .nullable()
    .transform((items) => items ?? []);
}

/** A field shown only as null in the carrier's sample: any JSON value is kept as it came. */
export const undocumented = z.unknown();
