/** Runs the built `parcel-recon` command in a child process, as a user or cron would. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const CLI = join(import.meta.dirname, '../../dist/src/cli/main.js');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command to its end with only PATH and `env` in its environment. */
export async function runCli(args: readonly string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: options.cwd, timeout: options.timeoutMs ?? 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Starts the command and leaves it running; its output gathers in the returned strings. */
export function spawnCli(args: readonly string[], env: Record<string, string>, options: { cwd?: string } = {}): { child: ChildProcess; output: { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}
