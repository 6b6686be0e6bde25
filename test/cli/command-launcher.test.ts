import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, symlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACK_START_SETTINGS } from '../../src/cli/tracking-memory.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { keysOf, startTestSandbox } from '../sandbox/sandbox-http.js';
import { sandboxEnv } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const LAUNCHER = join(import.meta.dirname, '../../bin/parcel-recon');
/** glibc splits its tunables in place at start: the variable ends after the first, and each other follows the previous one's end. */
const [FIRST_TUNABLE, ...OTHER_TUNABLES] = TRACK_START_SETTINGS.glibcTunables.split(':');

interface Launched {
  readonly child: ChildProcess;
  readonly ended: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Starts the installed command (through a symlink, as npm links it) with only PATH and `env` in its environment. */
function launch(command: string, args: string[], env: Record<string, string>): Launched {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, ended };
}

/**
 * What the process under `pid` runs once the launcher has handed over to Node (`exec` keeps the pid):
 * its arguments and its starting environment, from /proc.
 */
async function nodeProcessOf(pid: number): Promise<{ args: string[]; environment: string[] }> {
  for (let tries = 0; tries < 200; tries++) {
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((arg) => arg !== '');
    // The shell scripts before it also name main.js among their arguments; Node is the last to run.
    if (basename(args[0] ?? '') === 'node' && args.some((arg) => arg.endsWith('main.js'))) {
      return { args, environment: (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0') };
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`process ${pid} never became the Node.js command`);
}

describe('the parcel-recon command (bin/parcel-recon)', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let command: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 5 });
    workspace = await trackingWorkspace();
    command = join(workspace.dir, 'parcel-recon');
    await symlink(LAUNCHER, command);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  it('starts track with the process settings read at start, and tracks what comes on standard input', async () => {
    const account = sandbox.state.world.accounts[0]!;
    const { child, ended } = launch(
      command,
      ['track', '--input', '-', '--db', workspace.dbPath, '--json', '--retry-min-ms', '5'],
      sandboxEnv(sandbox),
    );
    // Standard input still open: the process waits there, so what it runs can be read.
    const { args, environment } = await nodeProcessOf(child.pid!);
    expect(args.slice(1, 2)).toEqual(TRACK_START_SETTINGS.nodeFlags);
    expect(args.slice(3)).toEqual(['track', '--input', '-', '--db', workspace.dbPath, '--json', '--retry-min-ms', '5']);
    expect(environment).toContain(`GLIBC_TUNABLES=${FIRST_TUNABLE}`);
    for (const tunable of OTHER_TUNABLES) expect(environment).toContain(tunable);
    child.stdin!.end(`order_code,account\n${sandbox.state.world.orderCode(0, 0)},${account.alias}\n`);
    const result = await ended;
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { counters: { ok: number } }).counters.ok).toBe(1);
    for (const key of Object.values(keysOf(sandbox))) expect(result.stderr.includes(key)).toBe(false);
  });

  it('leaves a GLIBC_TUNABLES the operator set as it is', async () => {
    const { child, ended } = launch(command, ['track', '--input', '-', '--db', workspace.dbPath], {
      ...sandboxEnv(sandbox),
      GLIBC_TUNABLES: 'glibc.malloc.arena_max=4',
    });
    const { environment } = await nodeProcessOf(child.pid!);
    expect(environment).toContain('GLIBC_TUNABLES=glibc.malloc.arena_max=4');
    child.stdin!.end('order_code\n');
    expect((await ended).code).toBe(0);
  });

  it('starts every other command as a plain Node.js process, and passes its exit code on', async () => {
    const { child, ended } = launch(command, ['sandbox', '--port', '0'], {});
    const { args, environment } = await nodeProcessOf(child.pid!);
    expect(args.some((arg) => arg.startsWith('--max-semi-space-size'))).toBe(false);
    expect(environment.some((entry) => entry.startsWith('GLIBC_TUNABLES='))).toBe(false);
    child.kill('SIGTERM');
    await ended;

    const badFlag = await launch(command, ['track', '--no-such-flag'], {}).ended;
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr.trim().split('\n')).toEqual(["error: unknown option '--no-such-flag'"]);
  });

  it('prints its version, and lists every command under --help', async () => {
    const { version } = JSON.parse(await readFile(join(import.meta.dirname, '../../package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const printed = await launch(command, [flag], {}).ended;
      expect(printed).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
    const help = await launch(command, ['--help'], {}).ended;
    expect(help.code).toBe(0);
    const commands = (await readdir(join(import.meta.dirname, '../../src/cli/commands'))).map((file) =>
      file.replace(/-command\.ts$/, ''),
    );
    expect(commands.length).toBeGreaterThan(10);
    for (const name of commands) expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
  });
});
