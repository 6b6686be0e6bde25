/** Writes the table of charge checks into docs/reports.md from their declarations (`npm run docs:charge-checks`). */
import { readFile, writeFile } from 'node:fs/promises';
import { CHARGE_CHECKS_DOC, withChargeChecksTable } from '../src/reports/charge-checks-doc.js';

const page = await readFile(CHARGE_CHECKS_DOC, 'utf8');
const written = withChargeChecksTable(page);
if (written !== page) await writeFile(CHARGE_CHECKS_DOC, written);
process.stdout.write(`${CHARGE_CHECKS_DOC}: ${written === page ? 'up to date' : 'table of charge checks written'}\n`);
