import { KNOWN_CARRIERS } from './known-carriers.js';
import type { NeutralStatus } from './neutral-status.js';

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * SQL: true where a row's status, a code of its own carrier's, is one of the `neutrals`: each carrier's
 * codes of them, from its definition. The codes of all carriers together come first, a cheap filter
 * that leaves the carrier's own to the rows it keeps.
 */
export function neutralStatusIn(neutrals: readonly NeutralStatus[], status = 'status', carrier = 'carrier'): string {
  const codesOf = KNOWN_CARRIERS.map((known) => ({
    id: known.id,
    codes: known.statuses.filter((s) => neutrals.includes(s.neutral)).map((s) => quoted(s.code)),
  })).filter(({ codes }) => codes.length > 0);
  if (codesOf.length === 0) return 'false';
  const any = [...new Set(codesOf.flatMap(({ codes }) => codes))];
  const own = codesOf.map(({ id, codes }) => `(${carrier} = ${quoted(id)} AND ${status} IN (${codes.join(', ')}))`);
  return `(${status} IN (${any.join(', ')}) AND (${own.join(' OR ')}))`;
}
