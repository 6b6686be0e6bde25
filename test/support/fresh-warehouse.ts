import { constants, mkdtempSync, rmSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Warehouse } from '../../src/warehouse/warehouse.js';

/**
 * A warehouse made once per test process, closed: each test that needs a new, empty warehouse gets a
 * copy of its file, which costs a file copy instead of running every schema step again. The tests
 * of making a warehouse (test/warehouse/warehouse.test.ts, schema-catalog.test.ts) open new files
 * themselves.
 */
let template: Promise<string> | undefined;

function templateFile(): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parcel-recon-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'template.duckdb');
    await (await Warehouse.open(file)).close();
    return file;
  })();
  return template;
}

/**
 * Puts a new warehouse at the current schema at `path` (its directory made), as a first writable open
 * would make it; a file already there is left as it is.
 */
export async function placeFreshWarehouse(path: string): Promise<void> {
  const file = await templateFile();
  await mkdir(dirname(path), { recursive: true });
  try {
    await copyFile(file, path, constants.COPYFILE_EXCL);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
