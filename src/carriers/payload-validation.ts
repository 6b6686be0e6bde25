import type { z } from 'zod';

export type PayloadCheck<T> = { ok: true; value: T } | { ok: false; message: string };

/** `priceInfo[2].cost` from a zod issue path. */
function fieldName(path: readonly PropertyKey[]): string {
  let name = '';
  for (const part of path) {
    if (typeof part === 'number') name += `[${part}]`;
    else name += name === '' ? String(part) : `.${String(part)}`;
  }
  return name === '' ? '(payload)' : name;
}

/** One line that names each wrong field and what is wrong with it. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], payloadName: string): string {
  const shown = issues.slice(0, 5).map((issue) => `${fieldName(issue.path)}: ${issue.message}`);
  const more = issues.length > 5 ? `; and ${issues.length - 5} more` : '';
  return `${payloadName} rejected: ${shown.join('; ')}${more}`;
}

/** Validates a decoded JSON value against a contract schema. */
export function checkPayload<S extends z.ZodType>(
  schema: S,
  value: unknown,
  payloadName: string,
): PayloadCheck<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, message: describeIssues(result.error.issues, payloadName) };
}
