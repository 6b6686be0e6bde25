/** The table of charge checks in docs/reports.md is the one their declarations give: regenerate it with npm run docs:charge-checks. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHARGE_CHECKS_DOC, chargeChecksTable, withCheckTables } from '../../src/reports/charge-checks-doc.js';
import { CHARGE_CHECKS, chargesQuery, DEFAULT_CHARGE_RULES } from '../../src/reports/charges-report.js';

const ROOT = join(import.meta.dirname, '../..');

describe('the table of charge checks in docs/reports.md', () => {
  it('is the one the declarations give (npm run docs:charge-checks writes it)', async () => {
    const page = await readFile(join(ROOT, CHARGE_CHECKS_DOC), 'utf8');
    expect(withCheckTables(page), 'docs/reports.md is stale: run npm run docs:charge-checks').toBe(page);
  });

  it('has a row per check, in the order of the report columns each check gives', () => {
    const rows = chargeChecksTable().split('\n').slice(2);
    expect(rows.map((row) => row.split('|')[1]!.trim())).toEqual(CHARGE_CHECKS.map((c) => `\`${c.name}\``));
    const query = chargesQuery(DEFAULT_CHARGE_RULES);
    const flagColumns = [...query.matchAll(/(\w+)_flag, \1_expected, \1_difference/g)].map((m) => m[1]);
    expect(flagColumns).toEqual(CHARGE_CHECKS.map((c) => c.name));
  });
});
