/** Runs the tracking pipeline in-process against a real sandbox and a real DuckDB file in a temp dir. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../src/carriers/client/answer-size.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { RUN_EXIT_CODES } from '../../src/errors/exit-codes.js';
import type { TrackRunSummary } from '../../src/pipeline/tracking/run-summary.js';
import { runTracking, type TrackRunOptions } from '../../src/pipeline/tracking/track-run.js';
import { type QuotaPolicyInput, QuotaPolicySchema } from '../../src/quota/quota-policy.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { csvSource } from '../../src/sources/csv-source.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { placeFreshWarehouse } from './fresh-warehouse.js';

export interface TrackingWorkspace {
  readonly dir: string;
  readonly dbPath: string;
  readonly logLines: string[];
  readonly logger: Logger;
  writeCsv(name: string, rows: (readonly string[])[]): Promise<string>;
  track(
    sandbox: RunningSandbox,
    inputs: string[],
    overrides?: Omit<Partial<TrackRunOptions>, 'quota'> & { quota?: QuotaPolicyInput },
  ): Promise<TrackRunSummary>;
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  dispose(): Promise<void>;
}

export function sandboxKeyRing(sandbox: RunningSandbox, aliases?: string[]): KeyRing {
  return new KeyRing(
    sandbox.state.world.accounts
      .filter((a) => !aliases || aliases.includes(a.alias))
      .map((a) => [a.alias, a.apiKey] as const),
  );
}

export async function trackingWorkspace(): Promise<TrackingWorkspace> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-track-'));
  const dbPath = join(dir, 'recon.duckdb');
  const logLines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  return {
    dir,
    dbPath,
    logLines,
    logger,
    async writeCsv(name, rows) {
      const path = join(dir, name);
      await writeFile(path, `${rows.map((r) => r.join(',')).join('\n')}\n`);
      return path;
    },
    async track(sandbox, inputs, overrides = {}) {
      await placeFreshWarehouse(dbPath);
      const warehouse = await Warehouse.open(dbPath);
      try {
        const { quota, ...rest } = overrides;
        return await runTracking({
          exitCodes: RUN_EXIT_CODES,
          job: 'test',
          carrier: DEFAULT_CARRIER_ID,
          sources: inputs.map((input) => csvSource(input, {})),
          keys: sandboxKeyRing(sandbox),
          warehouse,
          dataDir: dir,
          client: {
            trackingUrl: sandbox.url,
            timeoutMs: 2_000,
            maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
            connections: 16,
          },
          quota: QuotaPolicySchema.parse({ maxConcurrent: 16, ...quota }),
          retry: { attempts: 5, minDelayMs: 5, maxDelayMs: 50 },
          batchSize: 200,
          refreshTerminal: true,
          now: () => sandbox.state.clock.now(),
          logger,
          graceMs: 1_000,
          ...rest,
        });
      } finally {
        await warehouse.close();
      }
    },
    async query(sql) {
      const warehouse = await Warehouse.open(dbPath, { readOnly: true });
      try {
        return (await warehouse.connection.runAndReadAll(sql)).getRowObjectsJson() as never;
      } finally {
        await warehouse.close();
      }
    },
    async dispose() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The sandbox's lookups for one carrier day: answered plus refused, per key alias. */
export function sandboxLookups(sandbox: RunningSandbox, day: string): Record<string, number> {
  const usage = sandbox.state.quota.usage()[day];
  return Object.fromEntries(Object.entries(usage?.perKey ?? {}).map(([alias, u]) => [alias, u.lookups + u.refused]));
}
