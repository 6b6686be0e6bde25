import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/settings/catalog.js';
import { parseConfig } from '../../src/settings/config-file.js';
import { resolveSettings } from '../../src/settings/resolve-settings.js';
import { cli as runCli } from '../support/cli-process.js';

/** The settings a configuration gives with no flag and no environment. */
function settingsOf(config: unknown) {
  return resolveSettings(SETTINGS, { env: {}, file: parseConfig(config, 'x.json') }).values;
}

describe('the configuration file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function jobsListWith(config: unknown, mode = 0o644) {
    const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, typeof config === 'string' ? config : JSON.stringify(config));
    await chmod(file, mode);
    return { file, result: await runCli(['jobs', 'list', '--config', file], {}) };
  }

  it('refuses a field of the wrong type with one line naming the field', async () => {
    const { file, result } = await jobsListWith({ track: { concurrency: 'lots' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `parcel-recon: config ${file}: track.concurrency: Invalid input: expected number, received string\n`,
    );
  });

  it('refuses an unknown field, nested or not, naming it', async () => {
    const nested = await jobsListWith({ reports: { fromat: 'csv' } });
    expect(nested.result.code).toBe(2);
    expect(nested.result.stderr).toBe(`parcel-recon: config ${nested.file}: unknown field reports.fromat\n`);
    const top = await jobsListWith({ warehosue: 'x.duckdb' });
    expect(top.result.stderr).toBe(`parcel-recon: config ${top.file}: unknown field warehosue\n`);
  });

  it('refuses a bad cron expression, a job that does not exist and a file that is not JSON', async () => {
    const cron = await jobsListWith({ jobs: { nightly: { schedule: '0 25 * * *' } } });
    expect(cron.result.code).toBe(2);
    expect(cron.result.stderr).toMatch(/^parcel-recon: config .*: jobs\.nightly\.schedule: not a cron expression/);
    const unknown = await jobsListWith({ jobs: { nightlyy: { schedule: '0 2 * * *' } } });
    expect(unknown.result.stderr).toMatch(/jobs\.nightlyy: no such job \(known: nightly/);
    const notJson = await jobsListWith('{"warehouse": ');
    expect(notJson.result.stderr).toMatch(/^parcel-recon: config .* is not JSON: /);
    for (const r of [cron.result, unknown.result, notJson.result]) expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses keys inside a configuration other users can read, and names no key', async () => {
    const { result } = await jobsListWith({ apiKeys: { 'hanoi-shop': 'SECRET-KEY-123' } }, 0o644);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/holds apiKeys and can be read by other users \(mode 644\)/);
    expect(result.stderr).not.toContain('SECRET-KEY-123');
    const privateFile = await jobsListWith({ apiKeys: { 'hanoi-shop': 'SECRET-KEY-123' } }, 0o600);
    expect(privateFile.result.code).toBe(0);
  });

  it("refuses a tracking step's shard that is not I/N, and a Redis URL with a password, without echoing it", async () => {
    const shard = await jobsListWith({ track: { shard: '4/4' } });
    expect(shard.result.code).toBe(2);
    expect(shard.result.stderr).toBe(`parcel-recon: config ${shard.file}: track.shard: I/N with 0 <= I < N <= 1024\n`);
    const notShard = await jobsListWith({ track: { shard: 'half' } });
    expect(notShard.result.stderr).toBe(`parcel-recon: config ${notShard.file}: track.shard: I/N, e.g. 0/4\n`);
    const secret = await jobsListWith({ track: { redis: 'redis://:Quota-Pass-91@quota.internal:6379' } });
    expect(secret.result.code).toBe(2);
    expect(secret.result.stderr).toBe(
      `parcel-recon: config ${secret.file}: track.redis: the URL holds a password; give the whole URL in PARCEL_RECON_REDIS_URL instead\n`,
    );
    const notRedis = await jobsListWith({ track: { redis: 'http://quota.internal:6379' } });
    expect(notRedis.result.stderr).toBe(
      `parcel-recon: config ${notRedis.file}: track.redis: a redis:// or rediss:// URL\n`,
    );
    const worker = await jobsListWith({ track: { redis: 'rediss://quota.internal:6380/2', shard: '3/4' } });
    expect(worker.result.code, worker.result.stderr).toBe(0);
  });

  it('lists the jobs with their schedules and next run in the carrier time zone', async () => {
    const file = join(dir, 'list.json');
    await writeFile(file, JSON.stringify({ jobs: { nightly: { schedule: '30 1 * * *' } } }));
    const result = await runCli(['jobs', 'list', '--config', file, '--json'], {
      PARCEL_RECON_NOW: '2026-11-22T23:00:00+07:00',
    });
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { name: string; schedule: string; nextRun: string }[];
    expect(rows.find((r) => r.name === 'nightly')).toMatchObject({
      schedule: '30 1 * * *',
      nextRun: '2026-11-23T01:30:00+07:00',
    });
  });

  it('takes a retention section of whole days, compact off unless asked, and refuses another age naming the field', async () => {
    const retention = settingsOf({ retention: { olderThan: '90d' } });
    expect([retention['retention.olderThan'], retention['retention.compact']]).toEqual(['90d', false]);
    expect(settingsOf({})['retention.olderThan']).toBeUndefined();
    const bad = await jobsListWith({ retention: { olderThan: '3 months' } });
    expect(bad.result.code).toBe(2);
    expect(bad.result.stderr).toBe(
      `parcel-recon: config ${bad.file}: retention.olderThan: a number of days such as 90d\n`,
    );
  });

  it("takes every report format a command writes for a job's reports, workbooks included", () => {
    expect(settingsOf({ reports: { format: 'xlsx' } })['reports.format']).toBe('xlsx');
    expect(() => parseConfig({ reports: { format: 'xls' } }, 'x.json')).toThrow(/reports\.format/);
  });

  it('fills defaults for an empty configuration', () => {
    const config = settingsOf({});
    expect(config.dayUtcOffset).toBe(420);
    expect(config['reports.format']).toBe('csv');
    expect(config.jobs).toEqual({});
  });
});
