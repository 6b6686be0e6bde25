import { describe, expect, it } from 'vitest';
import { readWarehouseCatalog } from './warehouse-catalog.js';
import { useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

describe('a new warehouse', () => {
  // A change to the schema is meant when this reference changes with it: rewrite the file with
  // `npx vitest run test/warehouse/schema-baseline.test.ts -u` and review its diff.
  it('has the catalog of the baseline schema', async () => {
    const { warehouse } = await temp.open();
    const catalog = await readWarehouseCatalog(warehouse);
    await expect(`${JSON.stringify(catalog, null, 2)}\n`).toMatchFileSnapshot('./baseline-catalog.json');
  });
});
