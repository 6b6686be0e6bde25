import { z } from 'zod';
import { type CarrierInstant, parseCarrierInstant } from '../carrier-time.js';
import { type Money, moneyFromNumber, moneyFromText } from '../money.js';

/**
 * GHN's ways of saying a date is not set: null, an empty string, the text `null` (in its documented
 * samples), and Go's zero time (in the fee answer).
 */
const UNSET_DATES = new Set(['', 'null', '0001-01-01T00:00:00Z']);

/** A GHN date-time (ISO 8601 in UTC, `…Z`), or null when GHN says it is not set. */
export const ghnDateTime = z.union([z.string(), z.null()]).transform((text, ctx): CarrierInstant | null => {
  if (text === null || UNSET_DATES.has(text)) return null;
  const instant = parseCarrierInstant(text);
  if (instant === undefined) {
    ctx.issues.push({ code: 'custom', message: `not a date-time: ${JSON.stringify(text.slice(0, 40))}`, input: text });
    return z.NEVER;
  }
  return instant;
});

/** A date-time GHN always sets. */
export const ghnRequiredDateTime = ghnDateTime.refine((instant) => instant !== null, 'not set');

/** A flag, which GHN's documented samples also write as the text `true` or `false`. */
export const ghnFlag = z.union([z.boolean(), z.enum(['true', 'false']).transform((text) => text === 'true')]);

/** Whole VND: a JSON number, or digits as text (GHN writes `total_fee` as text in one answer). */
export const ghnAmount = z.union([
  z
    .number()
    .refine(Number.isFinite, 'not a finite number')
    .transform((value): Money => moneyFromNumber(value)),
  z
    .string()
    .regex(/^-?\d+$/, 'not a whole amount')
    .transform((text): Money => moneyFromText(text)),
]);

/** A number GHN may also send as digits in text (`payment_type_id` in its log). */
export const ghnInteger = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);
