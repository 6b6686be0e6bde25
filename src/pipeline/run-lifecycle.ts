import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { access, constants, mkdir, rm } from 'node:fs/promises';
import { epochMsToInstant, formatCarrierDateTime } from '../carriers/carrier-time.js';
import { SourceError } from '../sources/order-code-source.js';
import { dataFolder } from '../warehouse/data-folder.js';
import { findUnfinishedRun, finishRun, type RunCounts, startRun } from '../warehouse/run-store.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { removeUnfinishedSpoolFiles } from './raw-spool.js';

/**
 * How a run ended, in the words of its `runs` row; the command line gives each its exit code.
 * `interrupted`: told to stop a second time, the run gave up its lookups in flight at once.
 */
export type RunExitState = 'ok' | 'partial' | 'failed' | 'bad_input' | 'interrupted';

/** The process exit code of each way a run can end, as the command line defines them. */
export type RunExitCodes = Readonly<Record<RunExitState, number>>;

/** A run's id: the job, the start time to the second, and a few random bytes. */
export function newRunId(job: string, nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').slice(0, 15);
  return `${job}-${stamp}Z-${randomBytes(3).toString('hex')}`;
}

/** When a run started: the time it records, and a monotonic clock for its duration. */
export interface RunStartTime {
  readonly epochMs: number;
  readonly clockMs: number;
}

export function runStartTime(now: () => number): RunStartTime {
  return { epochMs: now(), clockMs: performance.now() };
}

/** The counts of a run that did no lookup. */
export const NO_COUNTS: RunCounts = {
  codesRead: 0,
  codesRejected: 0,
  codesDuplicate: 0,
  codesToLookUp: 0,
  lookedUpOk: 0,
  carrierErrors: 0,
  transportErrors: 0,
  deferred: 0,
  lookupsSpent: 0,
};

export interface RunStartOptions {
  readonly warehouse: Warehouse;
  readonly job: string;
  /** The source's description, as `runs` records it. */
  readonly source: string;
  /** The carrier day whose quota the run spends. */
  readonly carrierDay: string;
  readonly startedAt: RunStartTime;
  /** The run's scratch folder is `spool/RUN_ID` under it, its rejects file `rejects/RUN_ID.csv`. */
  readonly dataDir: string;
  /**
   * Whether a run of the same job, source and carrier day that was cut off (killed: its row still
   * says running) is resumed under its id rather than a new run started.
   */
  readonly resumable?: boolean;
  readonly exitCodes: RunExitCodes;
}

/** How a run ended, as its `runs` row keeps it (with the exit code of its state). */
export interface RunEnd {
  readonly counts: RunCounts;
  readonly exitState: RunExitState;
  readonly summary: unknown;
}

/**
 * One run's row in `runs` from start to finish, and its scratch folder: what track, price, images and
 * the jobs share.
 */
export class RunLifecycle {
  private constructor(
    readonly runId: string,
    /** True when this process resumed a run that was cut off. */
    readonly resumed: boolean,
    private readonly warehouse: Warehouse,
    private readonly dataDir: string,
    private readonly startedAt: RunStartTime,
    private readonly exitCodes: RunExitCodes,
  ) {}

  /** Records the run's start in `runs` (a resumed run's row is marked running again). */
  static async start(options: RunStartOptions): Promise<RunLifecycle> {
    const { warehouse, job, source, carrierDay, startedAt } = options;
    // A data folder the run cannot write is the user's to fix: refused before the run is recorded.
    const spoolRoot = dataFolder(options.dataDir).spool;
    await mkdir(spoolRoot, { recursive: true });
    await access(spoolRoot, constants.W_OK);
    const resumedRunId = options.resumable
      ? await findUnfinishedRun(warehouse, { job, carrierDay, source })
      : undefined;
    const runId = resumedRunId ?? newRunId(job, startedAt.epochMs);
    await startRun(warehouse, { runId, job, source, startedAt: epochMsToInstant(startedAt.epochMs), carrierDay });
    return new RunLifecycle(
      runId,
      resumedRunId !== undefined,
      warehouse,
      options.dataDir,
      startedAt,
      options.exitCodes,
    );
  }

  /** Where the run's files live while it runs (staged rows, batches on their way to the warehouse). */
  get scratchDir(): string {
    return dataFolder(this.dataDir).runScratch(this.runId);
  }

  get rejectsPath(): string {
    return dataFolder(this.dataDir).rejectsFile(this.runId);
  }

  exitCodeOf(state: RunExitState): number {
    return this.exitCodes[state];
  }

  /** When the run started and ended (carrier date-times) and how long it took. */
  timing(finishedAt: number): { startedAt: string; finishedAt: string; durationMs: number } {
    return {
      startedAt: formatCarrierDateTime(this.startedAt.epochMs),
      finishedAt: formatCarrierDateTime(finishedAt),
      durationMs: Math.round(performance.now() - this.startedAt.clockMs),
    };
  }

  /**
   * Records how the run ended in `runs`, then removes its scratch folder (a cut-off run's of the same
   * id included): what it held is committed, or is looked up again by the next run.
   */
  async finish(finishedAt: number, end: RunEnd): Promise<void> {
    await finishRun(this.warehouse, this.runId, {
      finishedAt: epochMsToInstant(finishedAt),
      ...end,
      exitCode: this.exitCodeOf(end.exitState),
    });
    await rm(this.scratchDir, { recursive: true, force: true });
  }

  /**
   * Ends a run a disk fault broke: its scratch folder and unfinished spool files go first (partial
   * files, and the room they took; what they held is looked up again), then the run is recorded as
   * failed.
   */
  async endOnDiskFault(finishedAt: number, fault: Error): Promise<void> {
    await rm(this.scratchDir, { recursive: true, force: true });
    await removeUnfinishedSpoolFiles(this.dataDir, this.runId);
    // A disk still full cannot take the record either; the fault is what the operator is told.
    await this.finish(finishedAt, { counts: NO_COUNTS, exitState: 'failed', summary: { error: fault.message } }).catch(
      () => undefined,
    );
  }
}

/** The exit of a run that broke: bad input when a source could not be read, else a failure. */
export function exitStateOfError(error: unknown): RunExitState {
  return error instanceof SourceError ? 'bad_input' : 'failed';
}

export interface RunStopOptions {
  /** Any of them aborted stops the run: SIGINT/SIGTERM, a lost shared Redis. */
  readonly signals: readonly (AbortSignal | undefined)[];
  /** Once a stop is requested, in-flight work gets this long before it is abandoned; never abandoned when unset. */
  readonly graceMs?: number | undefined;
  /** Aborted to abandon work in flight at once, whatever is left of the grace period (a second SIGINT). */
  readonly interrupt?: AbortSignal | undefined;
  readonly onStop?: () => void;
  readonly onAbandon?: () => void;
}

/**
 * A run's stop: once requested, no new work starts (`stopping`); work in flight gets the grace period
 * to finish, then `abandon` tells it to give up.
 */
export class RunStop {
  readonly stopping: AbortSignal;
  private readonly abandonment = new AbortController();
  private readonly listener: () => void;
  private readonly interrupt: AbortSignal | undefined;
  private readonly interruptListener: () => void;

  constructor(options: RunStopOptions) {
    this.stopping = AbortSignal.any(options.signals.filter((signal) => signal !== undefined));
    // Every request in flight and every retry waiting listens to them.
    setMaxListeners(0, this.stopping, this.abandonment.signal);
    this.listener = () => {
      options.onStop?.();
      if (options.graceMs === undefined) return;
      setTimeout(() => {
        this.abandonment.abort();
        options.onAbandon?.();
      }, options.graceMs).unref();
    };
    this.stopping.addEventListener('abort', this.listener, { once: true });
    this.interrupt = options.interrupt;
    this.interruptListener = () => {
      if (this.abandonment.signal.aborted) return;
      this.abandonment.abort();
      options.onAbandon?.();
    };
    if (this.interrupt?.aborted) this.interruptListener();
    else this.interrupt?.addEventListener('abort', this.interruptListener, { once: true });
  }

  /** Whether the run was interrupted: told to give up its work in flight at once. */
  get interrupted(): boolean {
    return this.interrupt?.aborted ?? false;
  }

  get abandon(): AbortSignal {
    return this.abandonment.signal;
  }

  get requested(): boolean {
    return this.stopping.aborted;
  }

  /** Stops listening; a stop requested from now on no longer calls the hooks. */
  dispose(): void {
    this.stopping.removeEventListener('abort', this.listener);
    this.interrupt?.removeEventListener('abort', this.interruptListener);
  }
}

/** Told how a run goes: a progress bar on a terminal, periodic log lines otherwise. */
export interface ProgressListener<P> {
  start(progress: P): void;
  update(progress: P): void;
  stop(): void;
}

const PROGRESS_INTERVAL_MS = 500;

/** Shows the run's progress until the returned function is called, which shows it a last time. */
export function showProgress<P>(listener: ProgressListener<P> | undefined, progress: () => P): () => void {
  if (listener === undefined) return () => undefined;
  listener.start(progress());
  const ticker = setInterval(() => listener.update(progress()), PROGRESS_INTERVAL_MS);
  return () => {
    clearInterval(ticker);
    listener.update(progress());
    listener.stop();
  };
}
