/** The carrier sandbox as a child process for benchmarks, so load and sandbox do not share an event loop. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI_PATH = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** The installed command (package.json's bin), as cron starts it: `track` gets its start-time memory settings. */
export const COMMAND_PATH = fileURLToPath(new URL('../../../bin/parcel-recon', import.meta.url));
export const SANDBOX_START = '2026-11-20T22:00:00+07:00';
const SANDBOX_READY_TIMEOUT_MS = 15_000;

export interface ListeningLine {
  msg: string;
  url: string;
  accounts: { alias: string; firstOrder: string }[];
}

/**
 * Starts `parcel-recon sandbox` (manual clock, fixed start, keys written to `keysFile`) and resolves
 * with its 'listening' log line. `nodeArgs` go to Node itself (`--cpu-prof`, which NODE_OPTIONS refuses).
 */
export function startSandboxProcess(
  keysFile: string,
  extraArgs: string[] = [],
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; listening: ListeningLine }> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      CLI_PATH,
      'sandbox',
      '--port',
      '0',
      '--clock',
      'manual',
      '--start',
      SANDBOX_START,
      '--keys-out',
      keysFile,
      ...extraArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the sandbox did not report listening in time')),
      SANDBOX_READY_TIMEOUT_MS,
    );
    child.once('exit', (code) => reject(new Error(`the sandbox exited with code ${String(code)} before listening`)));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      let parsed: Partial<ListeningLine>;
      try {
        parsed = JSON.parse(line) as Partial<ListeningLine>;
      } catch {
        return;
      }
      if (parsed.msg === 'carrier sandbox listening') {
        clearTimeout(timer);
        resolve({ child, listening: parsed as ListeningLine });
      }
    });
  });
}

export async function stopSandboxProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
}
