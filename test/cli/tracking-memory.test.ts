import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUCKDB_ALLOCATOR_CONF, DUCKDB_ALLOCATOR_ENV, TRACK_START_SETTINGS } from '../../src/cli/tracking-memory.js';

const DIST = join(import.meta.dirname, '../../dist/src');
const LAUNCHER = join(import.meta.dirname, '../../bin/node-with-track-settings');

/**
 * A process that does what `parcel-recon track` does: the allocator setting before DuckDB loads, then
 * the warehouse opening and loading rows; `preset` is put in its environment first, from inside the
 * process. jemalloc complains on standard error of a setting it cannot take.
 */
async function openWarehouseAfterSetting(
  dbPath: string,
  preset?: string,
): Promise<{ stderr: string; setting: string }> {
  const script = `
    ${preset === undefined ? '' : `process.env.${DUCKDB_ALLOCATOR_ENV} = ${JSON.stringify(preset)};`}
    process.argv[2] = 'track';
    await import(${JSON.stringify(pathToFileURL(join(DIST, 'cli/before-duckdb-loads.js')).href)});
    const { Warehouse } = await import(${JSON.stringify(pathToFileURL(join(DIST, 'warehouse/warehouse.js')).href)});
    const warehouse = await Warehouse.open(${JSON.stringify(dbPath)}, { memoryLimit: '128MB' });
    await warehouse.run('CREATE TEMP TABLE numbers AS SELECT range AS n FROM range(200000)');
    await warehouse.close();
    process.stdout.write(process.env.${DUCKDB_ALLOCATOR_ENV});`;
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '' },
  });
  return { stderr, setting: stdout };
}

describe("DuckDB's allocator setting for tracking runs", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tracking-memory-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is taken by jemalloc without complaint when the environment has none', async () => {
    const { stderr, setting } = await openWarehouseAfterSetting(join(dir, 'default.duckdb'));
    expect(setting).toBe(DUCKDB_ALLOCATOR_CONF);
    expect(stderr).not.toContain('<jemalloc>');
  });

  it("leaves one already there; jemalloc reads what the process set before DuckDB's first allocation", async () => {
    const { stderr, setting } = await openWarehouseAfterSetting(join(dir, 'preset.duckdb'), 'narenas:bogus');
    expect(setting).toBe('narenas:bogus');
    expect(stderr).toContain('<jemalloc>: Invalid conf value: narenas:bogus');
  });
});

describe("the launcher's start-time settings (bin/node-with-track-settings)", () => {
  it('are the values TRACK_START_SETTINGS names', async () => {
    const lines = (await readFile(LAUNCHER, 'utf8')).split('\n').filter((line) => !line.startsWith('#'));
    expect(lines).toContain(`GLIBC_TUNABLES="\${GLIBC_TUNABLES-${TRACK_START_SETTINGS.glibcTunables}}"`);
    expect(lines).toContain(`exec node ${TRACK_START_SETTINGS.nodeFlags.join(' ')} "$@"`);
  });
});
