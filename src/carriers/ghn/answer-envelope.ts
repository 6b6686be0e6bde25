import { z } from 'zod';
import { checkPayload, type PayloadCheck } from '../payload-validation.js';

/** The envelope of every GHN answer: `code` 200 and `data` on success, else an error text in `message`. */
export const GhnEnvelopeSchema = z.looseObject({
  code: z.number().int(),
  message: z.string(),
  // An error answer may leave `data` out.
  data: z.unknown().optional(),
  code_message: z.string().optional(),
});

/** An answer whose envelope is not a success: GHN's code and text, as it sent them. */
export interface GhnErrorAnswer {
  readonly code: number;
  readonly message: string;
  readonly codeMessage: string | null;
}

export type GhnResult<T> = { kind: 'ok'; value: T } | { kind: 'error'; error: GhnErrorAnswer };

/**
 * Reads a decoded GHN answer: its error when the envelope says so, else its `data` checked against
 * `dataSchema`. A `data` that is a list of one is read as that one (GHN's lookup by the shop's own code
 * documents a list where the lookup by GHN's code gives the order itself).
 */
export function checkGhnAnswer<S extends z.ZodType>(
  value: unknown,
  dataSchema: S,
  payloadName: string,
): PayloadCheck<GhnResult<z.output<S>>> {
  const envelope = checkPayload(GhnEnvelopeSchema, value, payloadName);
  if (!envelope.ok) return envelope;
  const { code, message, data, code_message } = envelope.value;
  if (code !== 200)
    return { ok: true, value: { kind: 'error', error: { code, message, codeMessage: code_message ?? null } } };
  const checked = checkPayload(dataSchema, Array.isArray(data) && data.length === 1 ? data[0] : data, payloadName);
  return checked.ok ? { ok: true, value: { kind: 'ok', value: checked.value } } : checked;
}
