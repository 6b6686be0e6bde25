import { constants } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { inject } from 'vitest';

/**
 * Puts a new warehouse at the current schema at `path` (its directory made), as a first writable open
 * would make it; a file already there is left as it is. It is a copy of the one warehouse the test run
 * made (test/support/fresh-warehouse-setup.ts): a file copy instead of every schema step again. The
 * tests of making a warehouse (test/warehouse/warehouse.test.ts, schema-catalog.test.ts) make their own.
 */
export async function placeFreshWarehouse(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  try {
    await copyFile(inject('freshWarehouse'), path, constants.COPYFILE_EXCL);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
