import { EXIT } from '../src/errors/exit-codes.js';
import { exportSnapshot, snapshotSummary } from '../src/warehouse/parquet-snapshot-export.js';
import type { JobContext, JobStepResult } from './job-definition.js';

/**
 * Exports the warehouse as a Parquet snapshot at `to`, as `export --to` does, through the job's own
 * connection: DuckDB lets no other process open the warehouse while the job holds it.
 */
export async function exportStep(context: JobContext, to: string): Promise<JobStepResult> {
  const summary = snapshotSummary(await exportSnapshot(context.warehouse, to, new Date(context.now())));
  context.logger.info({ to: summary.to, partitionsWritten: summary.partitionsWritten }, 'exported the snapshot');
  return { step: 'export', exitState: 'ok', exitCode: EXIT.OK, summary };
}
