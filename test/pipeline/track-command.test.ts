import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { keysOf, startTestSandbox } from '../sandbox/sandbox-http.js';
import { cli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('parcel-recon track', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let keys: Record<string, string>;
  let keysVariable: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 40, faults: { exceptionRate: 0.05, malformedRate: 0.02 } });
    workspace = await trackingWorkspace();
    keys = keysOf(sandbox);
    keysVariable = Object.entries(keys)
      .map(([alias, key]) => `${alias}=${key}`)
      .join(',');
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('tracks a CSV and no key appears in any log line, output, rejects file or the warehouse', async () => {
    const rows: string[][] = [['order_code', 'account']];
    for (const account of sandbox.state.world.accounts)
      for (let i = 0; i < 39; i++) rows.push([sandbox.state.world.orderCode(account.index, i), account.alias]);
    rows.push(['EX1', 'hanoi-shop'], ['EX100000099', 'hanoi-shop'], ['EX200000040', 'hanoi-shop']);
    const csv = await workspace.writeCsv('orders.csv', rows);
    const result = await cli(
      ['track', '--input', csv, '--db', workspace.dbPath, '--log-level', 'trace', '--retry-min-ms', '5', '--json'],
      {
        PARCEL_RECON_API_KEYS: keysVariable,
        PARCEL_RECON_TRACKING_URL: sandbox.url,
        PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
      },
    );

    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      counters: { ok: number; carrierErrors: number };
      codes: { rejected: number };
      rejectsFile: string;
      peakMemoryMb: number;
    };
    expect(summary.counters.ok).toBe(117);
    // The process's own peak: more than Node itself needs, far less than the machine has.
    expect(summary.peakMemoryMb).toBeGreaterThan(40);
    expect(summary.peakMemoryMb).toBeLessThan(4096);
    expect(summary.counters.carrierErrors).toBe(2);
    expect(summary.codes.rejected).toBe(1);
    expect(result.stderr).toContain('"msg":"run finished"');

    const texts = [result.stdout, result.stderr];
    // Compressed files (the raw spool) are read decompressed: a key inside would not show otherwise.
    for (const file of await filesUnder(workspace.dir))
      texts.push((file.endsWith('.gz') ? gunzipSync(await readFile(file)) : await readFile(file)).toString('latin1'));
    expect((await filesUnder(workspace.dir)).some((file) => /raw\/[^/]+\/[^/]+\.ndjson\.gz$/.test(file))).toBe(true);
    expect(texts.length).toBeGreaterThan(3);
    for (const key of Object.values(keys)) for (const text of texts) expect(text.includes(key)).toBe(false);
    for (const alias of Object.keys(keys)) expect(result.stderr).toContain(alias);
  });

  it('refuses a keys file other users can read, with one line and exit 2', async () => {
    const keysFile = join(workspace.dir, 'keys.json');
    await writeFile(keysFile, JSON.stringify(keys));
    await chmod(keysFile, 0o644);
    const csv = await workspace.writeCsv('few.csv', [['order_code'], ['EX100000001']]);
    const refused = await cli(
      ['track', '--input', csv, '--db', workspace.dbPath, '--keys-file', keysFile, '--tracking-url', sandbox.url],
      {},
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('chmod 600');
    for (const key of Object.values(keys)) expect(refused.stderr.includes(key)).toBe(false);

    await chmod(keysFile, 0o600);
    expect((await stat(keysFile)).mode & 0o777).toBe(0o600);
    const accepted = await cli(
      [
        'track',
        '--input',
        csv,
        '--db',
        workspace.dbPath,
        '--keys-file',
        keysFile,
        '--tracking-url',
        sandbox.url,
        '--delimiter',
        ',',
      ],
      {
        PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
      },
    );
    // Three keys and no account column: the row names no account and none is called default.
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('rejected 1');
  });

  it.each([
    [['track', '--input', 'missing.csv'], 'no tracking URL'],
    [['track', '--concurrency', 'lots'], '--concurrency'],
    [['track', '--tracking-url', 'ftp://x'], '--tracking-url'],
  ])('answers bad input %j with one line naming the problem and exit 2', async (args, expected) => {
    const result = await cli(args, {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(expected);
    expect(result.stderr).not.toContain('    at ');
  });

  it('names a missing input file in one line, exit 2, with nothing spent', async () => {
    const before = JSON.stringify(sandbox.state.quota.usage());
    const result = await cli(['track', '--input', join(workspace.dir, 'nope.csv'), '--db', workspace.dbPath], {
      PARCEL_RECON_API_KEYS: keysVariable,
      PARCEL_RECON_TRACKING_URL: sandbox.url,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nope.csv');
    expect(result.stderr).not.toContain('    at ');
    expect(JSON.stringify(sandbox.state.quota.usage())).toBe(before);
  });

  it('ends with one line naming the memory limit when a batch cannot load within it, exit 1', async () => {
    // A first chunk of 10,000 input rows does not fit in 10MB; nothing is looked up.
    const codes = Array.from({ length: 10_000 }, (_, i) => [`247MEM${String(i).padStart(6, '0')}`]);
    const csv = await workspace.writeCsv('memory.csv', [['order_code'], ...codes]);
    const result = await cli(
      [
        'track',
        '--input',
        csv,
        '--db',
        join(workspace.dir, 'memory.duckdb'),
        '--memory-limit',
        '10MB',
        '--retry-min-ms',
        '5',
      ],
      {
        PARCEL_RECON_API_KEYS: keysVariable,
        PARCEL_RECON_TRACKING_URL: sandbox.url,
        PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
      },
    );
    expect(result.code).toBe(1);
    const lastLine = result.stderr.trim().split('\n').at(-1);
    expect(lastLine).toMatch(
      /^parcel-recon: DuckDB ran out of memory \(memory_limit 9\.5 MiB\) loading 10000 input rows, even after a checkpoint: raise --memory-limit$/,
    );
    expect(result.stderr).not.toContain('    at ');
  });
});
