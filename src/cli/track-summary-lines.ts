import type { TrackRunSummary } from '../pipeline/tracking/run-summary.js';

/** Failed orders the printed summary names one by one. */
const FAILURES_SHOWN = 10;

/** A few lines a person reads at the end of a run. */
export function describeSummary(summary: TrackRunSummary & { readonly peakMemoryMb?: number }, dbPath: string): string {
  const c = summary.counters;
  const lines = [
    `run ${summary.runId}: ${summary.exitState} (exit ${summary.exitCode}), carrier day ${summary.carrierDay}`,
    `  codes read ${summary.codes.read}, rejected ${summary.codes.rejected}, duplicates ${summary.codes.duplicate}, to look up ${summary.codes.toLookUp}`,
    `  loaded ${c.ok}, carrier errors ${c.carrierErrors}${formatCounts(c.carrierErrorsByCode)}, failed ${c.transportErrors}, deferred ${c.deferred}${formatCounts(c.deferredByReason)}`,
    `  lookups spent ${summary.lookupsSpent}; quota left today: ${summary.quota.map((q) => `${q.alias} ${q.remaining}`).join(', ')}`,
    `  warehouse ${dbPath}${summary.rejectsFile ? `; rejects ${summary.rejectsFile}` : ''}`,
  ];
  if (summary.carrierDown !== null) lines.push(`  ${summary.carrierDown}`);
  if (summary.peakMemoryMb !== undefined) lines.push(`  peak memory ${summary.peakMemoryMb} MB`);
  const shown = summary.failedOrders.slice(0, FAILURES_SHOWN);
  for (const failed of shown) lines.push(`  failed: ${failed.orderCode} ${failed.errorCode}: ${failed.errorMessage}`);
  if (summary.failedOrdersTotal > shown.length)
    lines.push(
      `  and ${summary.failedOrdersTotal - shown.length} more failed (lookup_results of run ${summary.runId})`,
    );
  return `${lines.join('\n')}\n`;
}

function formatCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? '' : ` (${entries.map(([k, v]) => `${k} ${v}`).join(', ')})`;
}
