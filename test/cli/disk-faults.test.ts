/**
 * Disk and calendar faults, with the built CLI on real file systems: a tmpfs that fills while `track`
 * writes its warehouse, a full one and a read-only one `export` and `images --download` write to, and
 * days the calendar does not have. Each ends in one line naming the path and the cause (no stack), by
 * the exit-code rule (a full disk 1, a place that cannot be written or a wrong date 2), and leaves
 * nothing partial behind.
 */

import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { startTestSandbox, truthOrders } from '../sandbox/sandbox-http.js';
import { type CliResult, cli, sandboxEnv } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const run = promisify(execFile);

/** Mounting needs root; CI runs as root, and there a missing mount is a failure, not a skip. */
const CAN_MOUNT = process.getuid?.() === 0 || process.env.CI === 'true';

/** Every file and folder under `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1)).sort();
}

/** The failure is one line on stderr, naming the path and the cause, and no stack trace. */
function expectOneLine(result: CliResult, path: string, cause: string): void {
  const lines = result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^parcel-recon: cannot write ${path}\\S*: ${cause}$`));
  expect(result.stderr).not.toMatch(/\n\s+at |unexpected failure/);
}

describe.skipIf(!CAN_MOUNT)('disk faults', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let ordersCsv: string;
  const mounts: string[] = [];

  /** A tmpfs of `size` at a new folder of the workspace, unmounted after the test. */
  async function tmpfs(name: string, size: string): Promise<string> {
    const dir = join(workspace.dir, name);
    await mkdir(dir);
    await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
    mounts.push(dir);
    return dir;
  }

  async function readOnlyTmpfs(name: string): Promise<string> {
    const dir = await tmpfs(name, '1m');
    await run('mount', ['-o', 'remount,ro', dir]);
    return dir;
  }

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 300, seed: 33, imageBytes: 600 });
    workspace = await trackingWorkspace();
    const truth = await truthOrders(sandbox);
    ordersCsv = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...truth.map((o) => [o.orderCode, o.account]),
    ]);
    const tracked = await cli(['track', '--input', ordersCsv, '--db', workspace.dbPath], sandboxEnv(sandbox));
    expect(tracked.code, tracked.stderr).toBe(0);
  });

  afterEach(async () => {
    for (const dir of mounts.splice(0)) await run('umount', [dir]);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('a warehouse whose disk fills during track: one line, exit 1, no partial file left, and it still opens', async () => {
    const disk = await tmpfs('small-disk', '2m');
    const db = join(disk, 'recon.duckdb');
    const result = await cli(['track', '--input', ordersCsv, '--db', db], sandboxEnv(sandbox));
    expect(result.code, result.stderr).toBe(1);
    expectOneLine(result, disk, 'no space left on the device');
    // The warehouse and the empty spool folders only: no run folder, batch file, journal or unfinished spool file.
    expect((await filesUnder(disk)).filter((path) => path.includes('/'))).toEqual([]);
    const opened = await cli(['sql', '--db', db, 'SELECT count(*) AS runs FROM runs'], {});
    expect(opened.code, opened.stderr).toBe(0);
  });

  it('export --to a full disk: one line, exit 1, and the disk holds what it held', async () => {
    const disk = await tmpfs('full-disk', '1m');
    await writeFile(join(disk, 'filler'), Buffer.alloc(700 * 1024));
    const result = await cli(['export', '--db', workspace.dbPath, '--to', join(disk, 'snapshot')], {});
    expect(result.code, result.stderr).toBe(1);
    expectOneLine(result, join(disk, 'snapshot'), 'no space left on the device');
    expect(await filesUnder(disk)).toEqual(['filler']);
  });

  it('report files on a full disk: one line, exit 1, none of them left', async () => {
    const disk = await tmpfs('full-reports', '1m');
    await writeFile(join(disk, 'filler'), Buffer.alloc(1000 * 1024));
    const out = join(disk, 'reports');
    const result = await cli(['report', 'charges', '--db', workspace.dbPath, '--out', out], {});
    expect(result.code, result.stderr).toBe(1);
    expectOneLine(result, out, 'no space left on the device');
    expect((await filesUnder(disk)).filter((path) => path.startsWith('reports/'))).toEqual([]);
  });

  it('export --to a read-only disk: one line, exit 2, nothing made', async () => {
    const disk = await readOnlyTmpfs('read-only-disk');
    const to = join(disk, 'snapshot');
    const result = await cli(['export', '--db', workspace.dbPath, '--to', to], {});
    expect(result.code, result.stderr).toBe(2);
    expectOneLine(result, to, 'read-only file system');
    expect(await filesUnder(disk)).toEqual([]);
  });

  it('a refused export --to leaves the path as it was and makes nothing beside it', async () => {
    const to = await workspace.writeCsv('not-a-snapshot', [['a file']]);
    const held = await readFile(to, 'utf8');
    const result = await cli(['export', '--db', workspace.dbPath, '--to', to], {});
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await readFile(to, 'utf8')).toBe(held);
    expect((await readdir(workspace.dir)).filter((name) => name.startsWith('not-a-snapshot'))).toEqual([
      'not-a-snapshot',
    ]);
  });

  it('images --download to a folder a read-only disk refuses: exit 1 with the count of images not written', async () => {
    const disk = await readOnlyTmpfs('read-only-images');
    const folder = join(disk, 'images');
    const result = await cli(
      ['images', '--db', workspace.dbPath, '--rate', '500', '--concurrency', '8', '--download', folder],
      sandboxEnv(sandbox),
    );
    expect(result.code, result.stderr).toBe(1);
    const summary = result.stdout.split('\n');
    expect(summary[0]).toMatch(/: failed \(exit 1\)$/);
    const images = Number(/ images (\d+)$/m.exec(result.stdout)?.[1]);
    expect(images).toBeGreaterThan(0);
    expect(summary).toContain(`  not written ${images}: cannot write ${folder}: read-only file system`);
    expect(await filesUnder(disk)).toEqual([]);
  });
});

describe('days the calendar does not have', () => {
  it.each([
    [['quota', '--day', '2026-02-31'], '--day'],
    [['report', 'charges', '--from', '2026-02-30'], '--from'],
    [['report', 'failures', '--to', '2026-04-31'], '--to'],
  ])('%j is exit 2, one line', async (args, flag) => {
    const result = await cli([...args, '--db', '/nonexistent/recon.duckdb'], {});
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe(`parcel-recon: ${flag}: expected a date YYYY-MM-DD that the calendar has\n`);
  });
});
