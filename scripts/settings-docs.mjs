// Writes the settings and environment tables of the docs again from the settings catalog (after
// `npm run build`): every file below with the markers <!-- settings:begin --> ... <!-- settings:end -->
// or <!-- environment:begin --> ... <!-- environment:end -->. test/settings/settings-docs.test.ts
// fails when the tables in the repository differ from what this writes.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SETTINGS } from '../dist/src/settings/catalog.js';
import { SETTINGS_DOCUMENTS, withSettingsRegions } from '../dist/src/settings/settings-docs.js';

const root = join(import.meta.dirname, '..');
for (const document of SETTINGS_DOCUMENTS) {
  const path = join(root, document);
  const text = await readFile(path, 'utf8');
  const written = withSettingsRegions(text, SETTINGS);
  if (written !== text) {
    await writeFile(path, written);
    process.stdout.write(`${document}: settings tables written\n`);
  }
}
