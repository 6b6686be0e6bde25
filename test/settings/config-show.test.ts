import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../support/cli-process.js';

interface ShownSetting {
  name: string;
  value: unknown;
  secret: boolean;
  origin: Record<string, string>;
  invalid?: string;
}

describe('parcel-recon config show', () => {
  let dir: string;
  let config: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-config-show-'));
    config = join(dir, 'recon.config.json');
    await writeFile(
      config,
      JSON.stringify({
        warehouse: join(dir, 'file.duckdb'),
        track: { batchSize: 250, redis: 'redis://quota.internal:6379' },
        apiKeys: { 'hanoi-shop': 'FILE-KEY-7' },
      }),
    );
    await chmod(config, 0o600);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function show(args: string[], env: Record<string, string>) {
    const result = await cli(['config', 'show', '--json', ...args], env);
    return {
      ...result,
      rows: result.code === 2 && result.stdout === '' ? [] : (JSON.parse(result.stdout) as ShownSetting[]),
    };
  }
  const row = (rows: ShownSetting[], name: string) => rows.find((r) => r.name === name)!;

  it('names the origin of each value: flag, environment, file key or default; secrets only as set or unset', async () => {
    const { code, stdout, rows } = await show(['--config', config], {
      PARCEL_RECON_TRACKING_URL: 'http://127.0.0.1:9/api/Order/v1/Tracking',
      PARCEL_RECON_REDIS_URL: 'redis://:Quota-Pass-3@quota.internal:6379',
      MYSQL_PWD: 'Mysql-Pass-5',
    });
    expect(code).toBe(0);
    expect(row(rows, 'config')).toMatchObject({ value: config, origin: { kind: 'flag', flag: '--config' } });
    expect(row(rows, 'warehouse')).toMatchObject({
      value: join(dir, 'file.duckdb'),
      origin: { kind: 'file', file: config, key: 'warehouse' },
    });
    expect(row(rows, 'track.batchSize')).toMatchObject({
      value: 250,
      origin: { kind: 'file', key: 'track.batchSize' },
    });
    expect(row(rows, 'trackingUrl')).toMatchObject({
      origin: { kind: 'environment', variable: 'PARCEL_RECON_TRACKING_URL' },
    });
    expect(row(rows, 'track.attempts')).toMatchObject({ value: 5, origin: { kind: 'default' } });
    expect(row(rows, 'apiKeys')).toMatchObject({
      value: 'set',
      secret: true,
      origin: { kind: 'file', key: 'apiKeys' },
    });
    expect(row(rows, 'mysqlPassword')).toMatchObject({ value: 'set', origin: { kind: 'environment' } });
    expect(row(rows, 'callbackPassword')).toMatchObject({ value: 'unset', origin: { kind: 'default' } });
    expect(row(rows, 'track.redis')).toMatchObject({ value: 'redis://:redacted@quota.internal:6379' });
    for (const secret of ['FILE-KEY-7', 'Quota-Pass-3', 'Mysql-Pass-5']) expect(stdout).not.toContain(secret);

    const text = await cli(['config', 'show', '--config', config], { PARCEL_RECON_DB: join(dir, 'env.duckdb') });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^config +${config} +\\(flag --config\\)$`, 'm'));
    expect(text.stdout).toMatch(
      new RegExp(`^warehouse +${join(dir, 'env.duckdb')} +\\(environment PARCEL_RECON_DB\\)$`, 'm'),
    );
    expect(text.stdout).toMatch(
      new RegExp(`^track\\.batchSize +250 +\\(file ${config} key track\\.batchSize\\)$`, 'm'),
    );
    expect(text.stdout).toMatch(/^apiKeys +set +\(file .* key apiKeys\)$/m);
    expect(text.stdout).toMatch(/^track\.attempts +5 +\(default\)$/m);
  });

  it('names a refused value in its row and exits 2', async () => {
    const { code, rows } = await show(['--config', config], { PARCEL_RECON_TIME_ZONE: 'Mars/Olympus' });
    expect(code).toBe(2);
    expect(row(rows, 'timeZone')).toMatchObject({
      invalid: 'PARCEL_RECON_TIME_ZONE: "Mars/Olympus" is not a time zone; give an IANA name such as Asia/Ho_Chi_Minh',
    });
    expect(row(rows, 'warehouse').invalid).toBeUndefined();
  });

  it('is the configuration track reads: its warehouse and source, with no flag naming them', async () => {
    const codes = join(dir, 'orders.csv');
    await writeFile(codes, 'order_code\nEX100000001\nEX100000002\n');
    const trackConfig = join(dir, 'track.config.json');
    await writeFile(
      trackConfig,
      JSON.stringify({ warehouse: join(dir, 'tracked.duckdb'), source: { inputs: [codes] } }),
    );
    const plan = await cli(['track', '--plan', '--json'], {
      PARCEL_RECON_CONFIG: trackConfig,
      PARCEL_RECON_API_KEYS: 'default=k-plan',
    });
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ codes: { read: 2 } });
    expect(existsSync(join(dir, 'tracked.duckdb'))).toBe(true);
  });
});
