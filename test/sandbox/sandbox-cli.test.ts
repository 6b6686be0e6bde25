/**
 * `parcel-recon sandbox`: every knob has a flag that reaches the sandbox's options; --help lists them;
 * a bad value is one line and exit code 2; --keys-out writes the keys readable by the owner only.
 * The process tests run the built CLI (`npm test` builds it first).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TRACKING_ERROR } from '../../src/carriers/247express/contract.js';
import {
  CALLBACK_PASSWORD_ENV,
  sandboxCommand,
  sandboxOptionsFromFlags,
} from '../../src/cli/commands/sandbox-command.js';
import { type SandboxOptions, SandboxOptionsSchema } from '../../src/sandbox/sandbox-options.js';
import { trackingUrl } from './sandbox-http.js';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const START = '2026-11-20T22:00:00+07:00';

/** A value for each kind of flag argument, differing from every default. */
const VALUE_OF_ARGUMENT: Record<string, string> = {
  share: '0.5',
  n: '7',
  ms: '7',
  seconds: '7',
  minutes: '60',
  port: '0',
  x: '2',
  when: '2026-01-01T00:00:00+07:00',
  url: 'http://127.0.0.1:9',
  address: '0.0.0.0',
  letters: 'ZZ',
  name: 'someone',
};

/** Flags of the command itself rather than of the sandbox's options. */
const COMMAND_FLAGS = new Set(['--keys-out', '--log-level', '--help']);

/** Every leaf of the sandbox's options: `seed`, `faults.hangRate`, ... */
function optionLeaves(): string[] {
  return Object.entries(SandboxOptionsSchema.shape).flatMap(([name, field]) => {
    const inner = field instanceof z.ZodPrefault ? field.unwrap() : field;
    return inner instanceof z.ZodObject ? Object.keys(inner.shape).map((sub) => `${name}.${sub}`) : [name];
  });
}

function leafValue(options: SandboxOptions, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], options);
}

/** The sandbox's options from command-line arguments, as the command's action builds them. */
function optionsFrom(args: string[]): SandboxOptions {
  const command = sandboxCommand().exitOverride();
  command.parseOptions(['--start', START, ...args]);
  return SandboxOptionsSchema.parse(sandboxOptionsFromFlags(command.opts(), { [CALLBACK_PASSWORD_ENV]: 'secret' }));
}

describe('sandbox flags', () => {
  it('has a flag for every option of the sandbox, and each flag listed in --help changes its option', () => {
    const help = sandboxCommand().helpInformation();
    const listed = [...help.matchAll(/^\s+(--[a-z-]+)(?: <(\w+)>)?/gm)].map((m) => ({ flag: m[1]!, argument: m[2] }));
    const knobs = listed.filter((f) => !COMMAND_FLAGS.has(f.flag));
    expect(knobs.length).toBeGreaterThan(30);

    const baseline = optionsFrom([]);
    const changedLeaves = new Set<string>();
    for (const { flag, argument } of knobs) {
      const option = sandboxCommand().options.find((o) => o.long === flag)!;
      const values = option.argChoices ?? [VALUE_OF_ARGUMENT[argument ?? ''] ?? ''];
      const changed = values.flatMap((value) => {
        // HTTP Basic callbacks need a user name too.
        const extra = flag === '--callback-auth' && value === 'basic' ? ['--callback-basic-user', 'someone'] : [];
        const options = optionsFrom([flag, value, ...extra]);
        return optionLeaves().filter((leaf) => !isDeepStrictEqual(leafValue(options, leaf), leafValue(baseline, leaf)));
      });
      expect(changed, `${flag} changes nothing`).not.toEqual([]);
      for (const leaf of changed) changedLeaves.add(leaf);
    }
    // The callback password comes from the environment only: never on a command line.
    expect([...changedLeaves, 'callbacks.basicPassword'].sort()).toEqual(optionLeaves().sort());
  });

  it("takes the address of GHN's webhooks (it carries the shop's token) from the environment, never from a flag", () => {
    expect(sandboxCommand().options.some((o) => /webhook-url/i.test(o.long ?? ''))).toBe(false);
    const env = { PARCEL_RECON_SANDBOX_GHN_WEBHOOK_URL: 'http://127.0.0.1:9/ghn/webhook?token=shop-secret' };
    const options = SandboxOptionsSchema.parse(sandboxOptionsFromFlags({ start: START }, env));
    expect(options.carriers.ghn!.webhooks.url).toBe(env.PARCEL_RECON_SANDBOX_GHN_WEBHOOK_URL);
    expect(() =>
      sandboxOptionsFromFlags({ start: START }, { PARCEL_RECON_SANDBOX_GHN_WEBHOOK_URL: 'not an address' }),
    ).toThrow('$PARCEL_RECON_SANDBOX_GHN_WEBHOOK_URL: not an http(s) address');
  });

  it('takes the Basic callback password from the environment, never from a flag', () => {
    expect(sandboxCommand().options.some((o) => /password/i.test(o.long ?? ''))).toBe(false);
    expect(optionsFrom(['--callback-auth', 'basic', '--callback-basic-user', 'u']).callbacks.basicPassword).toBe(
      'secret',
    );
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { ...process.env, ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('sandbox command line', () => {
  beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm test does it first)`);
  });

  it('lists the knobs in --help and exits 0', () => {
    const run = runCli(['sandbox', '--help']);
    expect(run.code).toBe(0);
    for (const flag of [
      '--seed <n>',
      '--orders-per-account <n>',
      '--clock <mode>',
      '--per-key-limit <n>',
      '--global-limit <n>',
      '--hang-ms <ms>',
      '--rate-limit-rate <share>',
      '--callback-url <url>',
      '--callback-drop-rate <share>',
      '--imageless-rate <share>',
      '--keys-out <file>',
    ]) {
      expect(run.stdout).toContain(flag);
    }
  });

  it.each([
    [['--exception-rate', '2'], '--exception-rate'],
    [['--seed', 'abc'], '--seed'],
    [['--accounts', '12'], '--accounts'],
    [['--start', 'yesterday-ish'], '--start'],
    [['--clock', 'sometimes'], '--clock'],
    [['--callback-auth', 'basic'], '--callback-auth'],
  ])('refuses %j with exit code 2 and one line naming %s', (args, flag) => {
    const run = runCli(['sandbox', '--port', '0', ...args]);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain(flag);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe('');
  });
});

/** The JSON log line the sandbox writes on stderr once it listens. */
interface ListeningLine {
  msg: string;
  url: string;
  accounts: { alias: string; firstOrder: string }[];
  carriers: Record<string, { trackingUrl: string; keysFile: string | null }>;
}

function parseLogLine(line: string): ListeningLine | undefined {
  try {
    return JSON.parse(line) as ListeningLine;
  } catch {
    return undefined;
  }
}

describe('sandbox --keys-out', () => {
  let dir: string;

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm test does it first)`);
    dir = await mkdtemp(join(tmpdir(), 'sandbox-cli-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes {alias: key} readable by the owner only, keys that work and are never logged', async () => {
    const keysFile = join(dir, 'nested', 'keys.json');
    // A file already there with wider permissions is narrowed.
    await mkdir(join(dir, 'nested'));
    await writeFile(keysFile, '{}', { mode: 0o644 });
    const child = spawn(
      process.execPath,
      [
        CLI,
        'sandbox',
        '--port',
        '0',
        '--clock',
        'manual',
        '--start',
        START,
        '--orders-per-account',
        '5',
        '--keys-out',
        keysFile,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const logLines: string[] = [];
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const listening = await new Promise<ListeningLine>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no 'carrier sandbox listening' line; stderr:\n${logLines.join('\n')}`)),
          15_000,
        );
        void exited.then((code) =>
          reject(new Error(`the sandbox exited with ${String(code)}; stderr:\n${logLines.join('\n')}`)),
        );
        createInterface({ input: child.stderr }).on('line', (line) => {
          logLines.push(line);
          const entry = parseLogLine(line);
          if (entry?.msg === 'carrier sandbox listening') {
            clearTimeout(timer);
            resolve(entry);
          }
        });
      });

      expect((await stat(keysFile)).mode & 0o777).toBe(0o600);
      const keys = JSON.parse(await readFile(keysFile, 'utf8')) as Record<string, string>;
      expect(Object.keys(keys).sort()).toEqual(listening.accounts.map((a) => a.alias).sort());
      expect(new Set(Object.values(keys)).size).toBe(listening.accounts.length);

      const lookup = async (apiKey: string, ordercode: string) => {
        const url = trackingUrl(listening, { apiKey, ordercode });
        return (await (await fetch(url)).json()) as { errorCode: string | null; orderCode: string };
      };
      for (const account of listening.accounts) {
        const answer = await lookup(keys[account.alias]!, account.firstOrder);
        expect(answer).toMatchObject({ errorCode: null, orderCode: account.firstOrder });
      }
      const [first, second] = listening.accounts;
      expect((await lookup(keys[first!.alias]!, second!.firstOrder)).errorCode).toBe(
        TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT,
      );

      for (const key of Object.values(keys)) expect(logLines.join('\n')).not.toContain(key);

      // GHN's accounts, beside it, as a GHN keys file: each token with its shop, both accepted by GHN's API.
      const ghnKeysFile = join(dir, 'nested', 'keys.ghn.json');
      expect(listening.carriers.ghn).toEqual({
        trackingUrl: `${listening.url}/ghn/shiip/public-api`,
        keysFile: ghnKeysFile,
      });
      expect((await stat(ghnKeysFile)).mode & 0o777).toBe(0o600);
      const ghnKeys = JSON.parse(await readFile(ghnKeysFile, 'utf8')) as Record<
        string,
        { key: string; shopId: number }
      >;
      expect(Object.keys(ghnKeys).sort()).toEqual(Object.keys(keys).sort());
      for (const { key, shopId } of Object.values(ghnKeys)) {
        expect(Object.values(keys)).not.toContain(key);
        expect(logLines.join('\n')).not.toContain(key);
        const fees = await fetch(`${listening.carriers.ghn!.trackingUrl}/v2/shipping-order/soc`, {
          method: 'POST',
          headers: { token: key, shopid: String(shopId), 'content-type': 'application/json' },
          body: JSON.stringify({ order_code: 'G199999999' }),
        });
        // Token and shop accepted: GHN's answer for an order it does not have, not a refusal of either.
        expect(fees.status).toBe(404);
      }
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(logLines.some((line) => line.includes('carrier sandbox stopped'))).toBe(true);
  });
});
