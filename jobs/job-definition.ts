import type { Logger } from 'pino';
import type { CustomerRunOptions } from '../src/pipeline/customer-operation-run.js';
import type { RunExitState } from '../src/pipeline/run-lifecycle.js';
import type { TrackRunOptions } from '../src/pipeline/tracking/track-run.js';
import type { CodRules } from '../src/reports/cod-report.js';
import type { ReportFormat } from '../src/reports/writers/report-formats.js';
import type { RunCounts } from '../src/warehouse/run-store.js';
import type { Warehouse } from '../src/warehouse/warehouse.js';

/**
 * The tracking step's options as the configuration gives them; the job adds its name, warehouse and
 * stop signal, and connects to the Redis of a shared quota.
 */
export type TrackingSettings = Omit<TrackRunOptions, 'job' | 'warehouse' | 'progress' | 'stop' | 'sharedQuota'> & {
  /** The Redis this worker shares the quota through with the others; undefined when the quota is its own. */
  readonly redisUrl: string | undefined;
};

/** The price run's options as the configuration gives them. */
export type PricingSettings = Omit<CustomerRunOptions, 'job' | 'progress' | 'stop'>;

/** Everything a job needs from the configuration, checked at the edge (the command line) and passed down. */
export interface JobSettings {
  readonly dbPath: string;
  /** Spools, rejects, job summaries and locks. */
  readonly dataDir: string;
  readonly dayUtcOffsetMinutes: number;
  /** The time zone reports and messages show times in (an IANA name). */
  readonly timeZone: string;
  /** The tracking step's options; throws the user's error when the configuration lacks a source, keys or URL. */
  readonly tracking: () => Promise<TrackingSettings>;
  /** The carriers tracked after it (`alsoTrack`), each with its tracking step's options. */
  readonly alsoTracked: readonly {
    readonly carrier: string;
    readonly tracking: () => Promise<TrackingSettings>;
  }[];
  /** The configuration's `track.memoryLimit`: DuckDB's memory limit while the tracking step runs, in place of `track`'s default. */
  readonly trackMemoryLimit: string | undefined;
  /** What the nightly job prunes after tracking (`prune --older-than`), and whether it then compacts the warehouse. */
  readonly retention: { readonly olderThanDays: number; readonly compact: boolean } | undefined;
  /** Where the nightly job exports the warehouse's Parquet snapshot at its end (`export.to`); none when undefined. */
  readonly snapshotTo: string | undefined;
  /** The callback receiver's journal, ingested first when it exists. */
  readonly callbacksJournalDir: string;
  /** Where each job's reports go (a folder per job), their format, and how many carrier days back they cover. */
  readonly reports: {
    readonly outDir: string;
    readonly format: ReportFormat;
    readonly periodDays: number;
  };
  /** The price run's options; throws the user's error when the configuration lacks a base URL or keys. */
  readonly pricing: () => Promise<PricingSettings>;
  /** The rules of the cod-audit job's checks. */
  readonly cod: CodRules;
  readonly financeAudit: {
    /** The partner's invoice CSV (order_code, invoiced_amount, ...). */
    readonly invoices: string | undefined;
    /** Destinations of the orders to quote (order_code, ToProvinceName, ToDistrictName, ToWardName). */
    readonly destinations: string | undefined;
  };
}

export interface JobContext {
  readonly runId: string;
  readonly settings: JobSettings;
  readonly warehouse: Warehouse;
  readonly logger: Logger;
  readonly now: () => number;
  /** Aborted on SIGINT/SIGTERM: steps stop taking new work and commit what they did. */
  readonly stop: AbortSignal;
}

/** What one step of a job did: how it ended, its own exit code and a JSON summary a monitor can read. */
export interface JobStepResult {
  readonly step: string;
  readonly exitState: RunExitState;
  readonly exitCode: number;
  readonly summary: Record<string, unknown>;
  /** Why the step failed, in one line, when it ended on its own (a tracking step whose carrier was down). */
  readonly cause?: string;
  /** The lookup counts of a tracking step, which the job's `runs` row carries. */
  readonly counts?: RunCounts;
}

/** A named job: a fixed sequence of pipeline steps, run by `parcel-recon jobs run NAME` or the scheduler. */
export interface JobDefinition {
  readonly name: string;
  readonly description: string;
  /** When the scheduler runs it unless the configuration says otherwise (cron, carrier time zone). */
  readonly defaultSchedule: string;
  run(context: JobContext): Promise<JobStepResult[]>;
  /**
   * Whether the warehouse is compacted once the run is done: compaction swaps the file under an open
   * warehouse, so it comes after the job closes it, still under the job's lock.
   */
  readonly compactsAfterwards?: (settings: JobSettings) => boolean;
}
