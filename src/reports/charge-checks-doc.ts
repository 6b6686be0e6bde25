import { KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import { CHARGE_CHECKS } from './charges-report.js';
import { COD_CHECKS } from './cod-report.js';

/** Where docs/reports.md holds the tables of checks, which `npm run docs:charge-checks` writes. */
export const CHARGE_CHECKS_DOC = 'docs/reports.md';

/** The markers of a table of checks in the page, by the name of its region and the file declaring them. */
function markers(region: string, declaredIn: string): { start: string; end: string } {
  return {
    start: `<!-- ${region}: start (written by npm run docs:charge-checks from ${declaredIn}) -->`,
    end: `<!-- ${region}: end -->`,
  };
}
const CHARGE_MARKERS = markers('charge-checks', 'src/reports/charges-report.ts');
const COD_MARKERS = markers('cod-checks', 'src/reports/cod-report.ts');

/** A Markdown table, its columns padded to their widest cell as the docs' other tables are. */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(header), `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** The table of the charge checks, one row per check, as docs/reports.md shows it. */
export function chargeChecksTable(): string {
  return markdownTable(
    ['check', 'carriers', 'billed', 'expected', 'tolerance', 'at stake'],
    CHARGE_CHECKS.map((check) => [
      `\`${check.name}\``,
      KNOWN_CARRIERS.filter((known) => known.charges.checks.includes(check.name))
        .map((known) => known.name)
        .join(', '),
      check.billedText,
      check.expectedText,
      check.toleranceText ?? check.tolerance,
      check.money ? 'the difference' : 'none (a weight)',
    ]),
  );
}

/** The table of the COD checks, one row per check, as docs/reports.md shows it. */
export function codChecksTable(): string {
  return markdownTable(
    ['check', 'one finding per', 'flags when', "the carrier's side", 'what it should be'],
    COD_CHECKS.map((check) => [`\`${check.name}\``, check.per, check.what, check.actualText, check.expectedText]),
  );
}

/** The page with `table` written anew between the markers; fails when it has no markers. */
function withRegion(page: string, { start, end }: { start: string; end: string }, table: string): string {
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${CHARGE_CHECKS_DOC} has no ${start} ... ${end} region`);
  return `${page.slice(0, from + start.length)}\n\n${table}\n\n${page.slice(to)}`;
}

/** The reports page with its tables of charge and COD checks written anew between their markers. */
export function withCheckTables(page: string): string {
  return withRegion(withRegion(page, CHARGE_MARKERS, chargeChecksTable()), COD_MARKERS, codChecksTable());
}
