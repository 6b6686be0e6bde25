import { EXIT } from '../src/errors/exit-codes.js';
import { EXPORT_MEMORY_LIMIT, exportSnapshot, snapshotSummary } from '../src/warehouse/parquet-snapshot-export.js';
import type { JobContext, JobStepResult } from './job-definition.js';

/**
 * Exports the warehouse as a Parquet snapshot at `to`, as `export --to` does with its default memory
 * limit, through the job's own connection: DuckDB lets no other process open the warehouse while the
 * job holds it.
 */
export async function exportStep(context: JobContext, to: string): Promise<JobStepResult> {
  const exported = await context.warehouse.withSettings({ memoryLimit: EXPORT_MEMORY_LIMIT }, () =>
    exportSnapshot(context.warehouse, to, new Date(context.now())),
  );
  const summary = snapshotSummary(exported);
  context.logger.info({ to: summary.to, partitionsWritten: summary.partitionsWritten }, 'exported the snapshot');
  return { step: 'export', exitState: 'ok', exitCode: EXIT.OK, summary };
}
