import { describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { WarehouseError } from '../../src/warehouse/warehouse-errors.js';
import { readWarehouseCatalog } from './warehouse-catalog.js';
import { rowsOf, useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

describe('a new warehouse', () => {
  // A change to the schema is meant when this reference changes with it: rewrite the file with
  // `npx vitest run test/warehouse/schema-baseline.test.ts -u` and review its diff.
  it('has the catalog of the baseline schema', async () => {
    const { warehouse } = await temp.open();
    const catalog = await readWarehouseCatalog(warehouse);
    await expect(`${JSON.stringify(catalog, null, 2)}\n`).toMatchFileSnapshot('./baseline-catalog.json');
  });

  it('is at schema version 1, the baseline', async () => {
    const { warehouse } = await temp.open();
    expect(await rowsOf(warehouse, 'SELECT version, name FROM schema_migrations')).toEqual([
      { version: 1, name: 'baseline' },
    ]);
  });

  it('is refused once its schema is at the version after the baseline', async () => {
    const { warehouse, path } = await temp.open();
    await warehouse.run("INSERT INTO schema_migrations VALUES (2, 'next', current_timestamp)");
    await warehouse.close();
    await expect(Warehouse.open(path)).rejects.toThrow(
      new WarehouseError(
        `warehouse ${path} has schema version 2, newer than this parcel-recon knows (1); upgrade parcel-recon`,
      ),
    );
  });
});
