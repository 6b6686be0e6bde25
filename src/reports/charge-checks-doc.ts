import { CHARGE_CHECKS } from './charges-report.js';

/** Where docs/reports.md holds the table of checks, which `npm run docs:charge-checks` writes. */
export const CHARGE_CHECKS_DOC = 'docs/reports.md';
const START =
  '<!-- charge-checks: start (written by npm run docs:charge-checks from src/reports/charges-report.ts) -->';
const END = '<!-- charge-checks: end -->';

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
    ['check', 'billed', 'expected', 'tolerance', 'at stake'],
    CHARGE_CHECKS.map((check) => [
      `\`${check.name}\``,
      check.billedText,
      check.expectedText,
      check.toleranceText ?? check.tolerance,
      check.money ? 'the difference' : 'none (a weight)',
    ]),
  );
}

/** The reports page with its table of checks written anew between its markers; fails when it has no markers. */
export function withChargeChecksTable(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${CHARGE_CHECKS_DOC} has no ${START} ... ${END} region`);
  return `${page.slice(0, start + START.length)}\n\n${chargeChecksTable()}\n\n${page.slice(end)}`;
}
