/** `parcel-recon callbacks` as a real child process on a free loopback port, and the warehouse it fills. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { WarehouseBusyError } from '../../src/warehouse/warehouse-errors.js';

export const CLI = join(import.meta.dirname, '../../dist/src/cli/main.js');
const READY_TIMEOUT_MS = 20_000;

export interface ReceiverProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Every stderr line so far (JSON log lines). */
  readonly logLines: string[];
  /** SIGTERM, then the exit code (or the signal that ended it). */
  stop(): Promise<number | string | null>;
  /** SIGKILL, then wait for the process to be gone. */
  kill(): Promise<void>;
}

/** Starts the receiver with `args` after `callbacks`; `env` adds to a minimal environment (PATH). */
export function startReceiverProcess(args: string[], env: Record<string, string>): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, [CLI, 'callbacks', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logLines: string[] = [];
  // The exit code, or the signal that ended the process.
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the receiver did not report listening in time:\n${logLines.join('\n')}`)),
      READY_TIMEOUT_MS,
    );
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the receiver exited with code ${String(code)} before listening:\n${logLines.join('\n')}`));
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      logLines.push(line);
      let parsed: { msg?: string; url?: string };
      try {
        parsed = JSON.parse(line) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.msg === 'callback receiver listening' && parsed.url !== undefined) {
        clearTimeout(timer);
        resolve({
          child,
          url: parsed.url,
          logLines,
          async stop() {
            child.kill('SIGTERM');
            return exited;
          },
          async kill() {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
  });
}

/**
 * Runs a query on the warehouse read-only, waiting while another process (the receiver loading its
 * journal) holds the file.
 */
export async function queryWarehouse<T = Record<string, unknown>>(dbPath: string, sql: string): Promise<T[]> {
  const giveUpAt = Date.now() + 30_000;
  for (;;) {
    let warehouse: Warehouse;
    try {
      warehouse = await Warehouse.open(dbPath, { readOnly: true });
    } catch (error) {
      if (!(error instanceof WarehouseBusyError) || Date.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      return (await warehouse.connection.runAndReadAll(sql)).getRowObjectsJson() as T[];
    } finally {
      await warehouse.close();
    }
  }
}

/** Every file below `dir`, at any depth. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
