/** Runs the built `parcel-recon` command as a child process, as cron would. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { keysOf } from '../sandbox/sandbox-http.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../dist/src/cli/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The environment a command needs against a sandbox: its keys, its address, its clock. */
export function sandboxEnv(sandbox: RunningSandbox): Record<string, string> {
  return {
    PARCEL_RECON_API_KEYS: Object.entries(keysOf(sandbox)).map(([alias, key]) => `${alias}=${key}`).join(','),
    PARCEL_RECON_BASE_URL: sandbox.url,
    PARCEL_RECON_TRACKING_URL: sandbox.url,
    PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
  };
}
