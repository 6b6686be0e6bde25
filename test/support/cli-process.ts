/** Runs the built command line (dist) as a child process, as cron would. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';

const run = promisify(execFile);
export const CLI = join(import.meta.dirname, '../../dist/src/cli/main.js');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `parcel-recon ARGS` to its end with only PATH and `env` in its environment. */
export async function cli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Starts `parcel-recon ARGS` and hands back the child, for tests that signal or kill it. */
export function startCli(
  args: string[],
  env: Record<string, string>,
): ChildProcess & { readonly ended: Promise<CliResult>; output(): { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? (signal === 'SIGKILL' ? 137 : -1), stdout, stderr })),
  );
  return Object.assign(child, { ended, output: () => ({ stdout, stderr }) });
}

/** Waits until the running command has written `text` to stderr (a log line); throws when it ends or `timeoutMs` passes first. */
export async function logLine(child: ReturnType<typeof startCli>, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!child.output().stderr.includes(text)) {
    if (performance.now() > deadline || child.exitCode !== null)
      throw new Error(`no '${text}' from the command: ${child.output().stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The environment a command needs against a sandbox: its keys, its addresses, its clock. */
export function sandboxEnv(sandbox: RunningSandbox): Record<string, string> {
  return {
    PARCEL_RECON_API_KEYS: sandbox.state.world.accounts.map((a) => `${a.alias}=${a.apiKey}`).join(','),
    PARCEL_RECON_BASE_URL: sandbox.url,
    PARCEL_RECON_TRACKING_URL: sandbox.url,
    PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
  };
}
