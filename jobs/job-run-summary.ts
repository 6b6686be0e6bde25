import type { RunCounts } from '../src/warehouse/run-store.js';
import type { JobStepResult } from './job-definition.js';

/** What a job run leaves for a monitor: the JSON file, the `runs` row's summary and the notification. */
export interface JobRunSummary {
  readonly runId: string;
  readonly job: string;
  readonly carrierDay: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly exitCode: number;
  readonly exitState: 'ok' | 'partial' | 'failed';
  readonly counts: RunCounts;
  readonly steps: readonly JobStepResult[];
  readonly error: string | null;
  readonly summaryFile: string;
  /**
   * How each alert about the run went, once they were sent (none when the run warranted none). The
   * summary sent in an alert has none: it is written before the alert goes.
   */
  readonly alerts?: readonly AlertDelivery[];
}

/**
 * Whether an alert reached its channel, as a job's summary records it: the receiver's host at most,
 * never the URL (its path or query carry the token), and the failure's reason in one line.
 */
export interface AlertDelivery {
  readonly channel: 'webhook';
  readonly format: 'json' | 'text' | 'telegram';
  /** The receiver's host and port; null when the URL is not set or not an http(s) URL. */
  readonly receiver: string | null;
  /** Why it was sent: how the run ended, `charges`, or `test`. */
  readonly reasons: readonly string[];
  readonly delivered: boolean;
  readonly attempts: number;
  /** Why it was not delivered (a status, an error code, a missing variable); null when delivered. */
  readonly reason: string | null;
}
