import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SETTINGS } from '../../src/settings/catalog.js';
import { withSettingOptions } from '../../src/settings/command-options.js';
import { parseConfig } from '../../src/settings/config-file.js';
import { configFileSchema } from '../../src/settings/config-schema.js';
import { resolveSettings } from '../../src/settings/resolve-settings.js';
import type { Setting } from '../../src/settings/setting.js';
import { SETTINGS_DOCUMENTS, withSettingsRegions } from '../../src/settings/settings-docs.js';

const ROOT = join(import.meta.dirname, '../..');
const file = (contents: Record<string, unknown>) => ({ path: 'recon.json', contents });

describe('the settings catalog', () => {
  it('resolves a flag over the environment over the file over the default, recording each origin', () => {
    const env = { PARCEL_RECON_DB: 'env.duckdb', PARCEL_RECON_TRACKING_URL: 'http://env.example' };
    const config = file({ warehouse: 'file.duckdb', trackingUrl: 'http://file.example', track: { batchSize: 300 } });
    const { values, origins } = resolveSettings(SETTINGS, {
      command: 'track',
      flags: { db: 'flag.duckdb', concurrency: '16' },
      env,
      file: config,
    });
    expect([values.warehouse, origins.warehouse]).toEqual(['flag.duckdb', { kind: 'flag', flag: '--db' }]);
    expect([values.trackingUrl, origins.trackingUrl]).toEqual([
      'http://env.example',
      { kind: 'environment', variable: 'PARCEL_RECON_TRACKING_URL' },
    ]);
    expect([values['track.batchSize'], origins['track.batchSize']]).toEqual([
      300,
      { kind: 'file', file: 'recon.json', key: 'track.batchSize' },
    ]);
    expect(values['track.concurrency']).toBe(16);
    expect([values['track.attempts'], origins['track.attempts']]).toEqual([5, { kind: 'default' }]);
    // A default that reads another setting reads it as resolved.
    expect(values.dataDir).toBe('.');
  });

  it("takes a command's flags only for the settings that command takes", () => {
    const { values } = resolveSettings(SETTINGS, { command: 'sql', flags: { concurrency: '16' }, env: {}, file: null });
    expect(values['track.concurrency']).toBe(128);
  });

  it("replaces the file's source with the one the flags name, rather than adding to it", () => {
    const { values, origins } = resolveSettings(SETTINGS, {
      command: 'track',
      flags: { input: ['tonight.csv'] },
      env: {},
      file: file({ source: { fromDuckdb: 'erp.duckdb', query: 'SELECT order_code FROM shipments' } }),
    });
    expect(values['source.inputs']).toEqual(['tonight.csv']);
    expect(values['source.fromDuckdb']).toBeUndefined();
    expect(values['source.query']).toBeUndefined();
    expect(origins['source.fromDuckdb']).toEqual({ kind: 'default' });
  });

  it('refuses a wrong value in one line naming where it came from, when the value is read', () => {
    const resolved = resolveSettings(SETTINGS, {
      command: 'track',
      flags: { batchSize: 'lots' },
      env: { PARCEL_RECON_TRACKING_URL: 'ftp://x', PARCEL_RECON_REDIS_URL: 'redis://:pw@quota:6379' },
      file: file({ track: { redis: 'redis://:pw@quota:6379' } }),
    });
    expect(() => resolved.values['track.batchSize']).toThrow(/^--batch-size: /);
    expect(() => resolved.values.trackingUrl).toThrow('PARCEL_RECON_TRACKING_URL: not an http(s) URL');
    // The environment may hold the Redis password; a command line or the file may not.
    expect(resolved.values['track.redis']).toBe('redis://:pw@quota:6379');
    expect(
      () =>
        resolveSettings(SETTINGS, { env: {}, file: file({ track: { redis: 'redis://:pw@quota:6379' } }) }).values[
          'track.redis'
        ],
    ).toThrow(
      'config recon.json: track.redis: the URL holds a password; give the whole URL in PARCEL_RECON_REDIS_URL instead',
    );
  });
});

/** A setting only this test declares: the catalog, extended by it and nothing else. */
const LOOKUP_NOTE: Setting = {
  type: z.string().min(1),
  default: 'none',
  flag: '--lookup-note <text>',
  configKey: 'track.lookupNote',
  env: 'PARCEL_RECON_LOOKUP_NOTE',
  renamedFrom: { env: ['PARCEL_RECON_NOTE'], configKey: ['track.note'] },
  help: 'a note recorded with each lookup',
  commands: ['track'],
};
const EXTENDED = { ...SETTINGS, 'track.lookupNote': LOOKUP_NOTE };

describe('a setting added to the catalog', () => {
  it("appears in the command's --help, the configuration file's schema and the regenerated docs", async () => {
    const help = withSettingOptions(new Command('track'), 'track', EXTENDED).helpInformation();
    expect(help).toMatch(/--lookup-note <text>\s+a note recorded with each lookup \(else\s+\$PARCEL_RECON_LOOKUP_NOTE/);
    expect(withSettingOptions(new Command('track'), 'track', SETTINGS).helpInformation()).not.toContain(
      '--lookup-note',
    );

    const withNote = { track: { lookupNote: 'night run' } };
    expect(configFileSchema(EXTENDED).safeParse(withNote).success).toBe(true);
    expect(configFileSchema(SETTINGS).safeParse(withNote).success).toBe(false);
    expect(configFileSchema(EXTENDED).safeParse({ track: { lookupNote: 7 } }).success).toBe(false);

    const commands = await readFile(join(ROOT, 'docs/commands.md'), 'utf8');
    const regenerated = withSettingsRegions(commands, EXTENDED);
    expect(regenerated).toMatch(
      /\| `track.lookupNote` +\| `--lookup-note` \(track\) +\| `PARCEL_RECON_LOOKUP_NOTE` +\| `track.lookupNote` +\| none /,
    );
    expect(regenerated).toMatch(
      /\| `PARCEL_RECON_LOOKUP_NOTE` +\| a note recorded with each lookup \(`--lookup-note`; `track.lookupNote`; default `none`\)/,
    );
    expect(commands).not.toContain('lookup-note');
  });

  it('still reads its earlier variable and key, with a warning naming the new one', () => {
    const fromOldVariable = resolveSettings(EXTENDED, { env: { PARCEL_RECON_NOTE: 'old' }, file: null });
    expect(fromOldVariable.values['track.lookupNote']).toBe('old');
    expect(fromOldVariable.origins['track.lookupNote']).toEqual({ kind: 'environment', variable: 'PARCEL_RECON_NOTE' });
    expect(fromOldVariable.warnings).toEqual([
      'PARCEL_RECON_NOTE is renamed PARCEL_RECON_LOOKUP_NOTE; set PARCEL_RECON_LOOKUP_NOTE',
    ]);

    const both = resolveSettings(EXTENDED, {
      env: { PARCEL_RECON_NOTE: 'old', PARCEL_RECON_LOOKUP_NOTE: 'new' },
      file: null,
    });
    expect([both.values['track.lookupNote'], both.warnings]).toEqual(['new', []]);

    const oldKey = { track: { note: 'from the file' } };
    expect(configFileSchema(EXTENDED).safeParse(oldKey).success).toBe(true);
    const fromOldKey = resolveSettings(EXTENDED, { env: {}, file: file(oldKey) });
    expect(fromOldKey.values['track.lookupNote']).toBe('from the file');
    expect(fromOldKey.warnings).toEqual([
      'config recon.json: track.note is renamed track.lookupNote; write track.lookupNote',
    ]);
  });
});

describe('the generated docs', () => {
  it('are what the catalog writes (npm run docs:settings writes them again)', async () => {
    for (const document of SETTINGS_DOCUMENTS) {
      const text = await readFile(join(ROOT, document), 'utf8');
      expect(withSettingsRegions(text, SETTINGS), `${document} is stale: run npm run docs:settings`).toBe(text);
    }
    expect(await readFile(join(ROOT, 'docs/commands.md'), 'utf8')).toContain('<!-- settings:begin -->\n| setting ');
  });

  it("check every key of the file against the catalog's types", () => {
    expect(() => parseConfig({ track: { concurrency: 'lots' } }, 'recon.json')).toThrow(
      'config recon.json: track.concurrency: Invalid input: expected number, received string',
    );
  });
});
