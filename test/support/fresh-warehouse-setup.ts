import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { Warehouse } from '../../src/warehouse/warehouse.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A new warehouse, closed, made once per test run for test/support/fresh-warehouse.ts to copy. */
    freshWarehouse: string;
  }
}

/** Makes the run's new warehouse before the first test file, and removes it after the last. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-template-'));
  const file = join(dir, 'template.duckdb');
  await (await Warehouse.open(file)).close();
  project.provide('freshWarehouse', file);
  return () => rm(dir, { recursive: true, force: true });
}
