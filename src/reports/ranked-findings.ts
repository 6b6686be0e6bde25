import { formatVnd, sumMoney } from '../carriers/money.js';

/** A kind of finding a summary lists: how many it counts, and the money at stake (null: no money, as a weight check). */
export interface SummaryFinding {
  readonly name: string;
  readonly count: number;
  readonly atStake: string | null;
  /** Of them, how many are settled: their money is not in atStake. */
  readonly settled?: number;
}

/** Kinds of findings a summary lists by name; the rest are counted on one line. */
export const FINDINGS_SHOWN = 5;

/**
 * The lines a summary gives its findings: the kinds by money at stake, largest first (then by count),
 * the first `shown` by name, and the rest on one line with their count and money
 * (`and 4 more checks: 12 orders, 35,000 VND`). `kinds` names them (`checks`), `unit` what they count.
 */
export function rankedFindingLines(
  findings: readonly SummaryFinding[],
  words: { readonly kinds: string; readonly unit: string },
  shown = FINDINGS_SHOWN,
): string[] {
  const ranked = findings
    .filter((f) => f.count > 0)
    .sort((a, b) => Number(b.atStake ?? 0) - Number(a.atStake ?? 0) || b.count - a.count);
  const money = (atStake: string | null) => (atStake === null ? '' : `, ${formatVnd(atStake)} VND`);
  const settled = (f: SummaryFinding) => (f.settled ? ` (${f.settled} settled)` : '');
  const lines = ranked
    .slice(0, shown)
    .map((f) => `${f.name}: ${f.count} ${words.unit}${settled(f)}${money(f.atStake)}`);
  const rest = ranked.slice(shown);
  if (rest.length > 0) {
    const count = rest.reduce((sum, f) => sum + f.count, 0);
    const atStake = sumMoney(rest.map((f) => f.atStake ?? 0));
    lines.push(`and ${rest.length} more ${words.kinds}: ${count} ${words.unit}${money(atStake)}`);
  }
  return lines;
}
