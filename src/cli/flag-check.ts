import type { z } from 'zod';
import { describeIssues } from '../carrier/contract.js';
import { UserError } from './exit-codes.js';

/** Checks flags against a schema; the first problem is one line naming its flag. */
export function checkFlags<S extends z.ZodObject>(schema: S, raw: Record<string, unknown>): z.output<S> {
  const checked = schema.safeParse(raw);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0]!;
  const key = String(issue.path[0] ?? '');
  const flag = key in schema.shape ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : undefined;
  throw new UserError(flag ? `${flag}: ${issue.message}` : describeIssues(checked.error.issues, 'options'));
}
