/**
 * A user's mistake on the command line (a log level pino does not know, a folder or file the
 * program must write that cannot be written) is one line on stderr and exit 2, never a stack trace;
 * the sandbox stops rather than serve without the keys file it was asked to write.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { cli } from '../support/cli-process.js';

/** Checks that a run ended with exit 2 and one line on stderr, and gives that line. */
function oneLineExit2(result: { code: number; stdout: string; stderr: string }): string {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  return lines[0]!;
}

describe('a user mistake is one line and exit 2', () => {
  let dir: string;
  /** A regular file: any path under it cannot be made a folder (ENOTDIR), even for root. */
  let file: string;
  let keysFile: string;
  let input: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-mistakes-'));
    file = join(dir, 'a-file');
    await writeFile(file, 'not a folder\n');
    keysFile = join(dir, 'keys.json');
    await writeFile(keysFile, JSON.stringify({ 'hanoi-shop': 'k-hanoi' }), { mode: 0o600 });
    input = join(dir, 'orders.csv');
    await writeFile(input, 'order_code,account\nEX100000001,hanoi-shop\n');
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['track', ['track', '--input', 'orders.csv']],
    ['replay', ['replay']],
    ['demo', ['demo']],
    ['sandbox', ['sandbox', '--port', '0']],
    ['schedule', ['schedule']],
    ['jobs run', ['jobs', 'run', 'nightly']],
    ['callbacks ingest', ['callbacks', 'ingest']],
    ['price', ['price']],
  ])('%s refuses --log-level loud', async (_name, args) => {
    const line = oneLineExit2(await cli([...args, '--log-level', 'loud'], {}, 20_000));
    expect(line).toContain('loud');
  });

  const TRACKING = ['--tracking-url', 'http://127.0.0.1:9/api/Order/v1/Tracking'];

  it('track refuses a --data-dir under a file, before recording a run', async () => {
    const db = join(dir, 'track.duckdb');
    const dataDir = join(file, 'data');
    const line = oneLineExit2(
      await cli(
        ['track', '--input', input, '--db', db, '--data-dir', dataDir, '--keys-file', keysFile, ...TRACKING],
        {},
      ),
    );
    expect(line).toContain(dataDir);
    const runs = await cli(['sql', 'SELECT count(*) AS runs FROM runs', '--db', db, '--format', 'csv'], {});
    expect(runs.stdout).toBe('runs\n0\n');
  });

  it('track refuses a --db in a folder that cannot be made', async () => {
    const line = oneLineExit2(
      await cli(
        ['track', '--input', input, '--db', join(file, 'sub', 'recon.duckdb'), '--keys-file', keysFile, ...TRACKING],
        {},
      ),
    );
    expect(line).toContain(file);
  });

  it('track refuses a --redis URL that holds a password, without repeating it', async () => {
    const db = join(dir, 'redis.duckdb');
    const line = oneLineExit2(
      await cli(
        [
          'track',
          '--input',
          input,
          '--db',
          db,
          '--keys-file',
          keysFile,
          '--redis',
          'redis://:Quota-Pass-7@127.0.0.1:1',
        ],
        {},
      ),
    );
    expect(line).toContain('PARCEL_RECON_REDIS_URL');
    expect(line).not.toContain('Quota-Pass-7');
  });

  it('replay refuses a --data-dir under a file', async () => {
    const line = oneLineExit2(
      await cli(['replay', '--db', join(dir, 'replay.duckdb'), '--data-dir', join(file, 'd')], {}),
    );
    expect(line).toContain(join(file, 'd'));
  });

  it('callbacks ingest and serve refuse a --journal-dir under a file', async () => {
    const journal = join(file, 'journal');
    const ingest = await cli(['callbacks', 'ingest', '--journal-dir', journal, '--db', join(dir, 'cb.duckdb')], {});
    expect(oneLineExit2(ingest)).toContain(journal);
    const serve = await cli(
      [
        'callbacks',
        'serve',
        '--port',
        '0',
        '--journal-dir',
        journal,
        '--db',
        join(dir, 'cb.duckdb'),
        '--keys-file',
        keysFile,
      ],
      {},
      20_000,
    );
    expect(oneLineExit2(serve)).toContain(journal);
  });

  it('report refuses an --out under a file', async () => {
    const db = join(dir, 'report.duckdb');
    await (await Warehouse.open(db)).close();
    const out = join(file, 'reports');
    expect(oneLineExit2(await cli(['report', 'failures', '--db', db, '--out', out], {}))).toContain(out);
  });

  it('the sandbox exits when it cannot write --keys-out', async () => {
    const line = oneLineExit2(await cli(['sandbox', '--port', '0', '--keys-out', join(file, 'keys.json')], {}, 20_000));
    expect(line).toContain(file);
  });
});
