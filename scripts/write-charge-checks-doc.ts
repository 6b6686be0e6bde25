/** Writes the tables of charge and COD checks into docs/reports.md from their declarations (`npm run docs:charge-checks`). */
import { readFile, writeFile } from 'node:fs/promises';
import { CHARGE_CHECKS_DOC, withCheckTables } from '../src/reports/charge-checks-doc.js';

const page = await readFile(CHARGE_CHECKS_DOC, 'utf8');
const written = withCheckTables(page);
if (written !== page) await writeFile(CHARGE_CHECKS_DOC, written);
process.stdout.write(`${CHARGE_CHECKS_DOC}: ${written === page ? 'up to date' : 'tables of checks written'}\n`);
