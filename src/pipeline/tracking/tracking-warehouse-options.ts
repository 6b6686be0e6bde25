import type { WarehouseOptions } from '../../warehouse/warehouse.js';

/**
 * DuckDB's settings while tracking. Rows not yet checkpointed stay in memory, so a low checkpoint
 * threshold keeps them few; the memory limit holds a batch's statements (what no longer fits spills to
 * `<file>.tmp`) and no more, since a higher one only fills with uncheckpointed rows. One thread: a
 * batch's statements are too small to gain from a second, and the lookups' main thread needs the other core.
 */
export const TRACKING_WAREHOUSE_OPTIONS = {
  memoryLimit: '64MB',
  checkpointThreshold: '32MB',
  threads: 1,
} as const satisfies WarehouseOptions;

/** A tracking run's warehouse settings, with the operator's memory limit (`--memory-limit`, a job's `track.memoryLimit`) when one is given. */
export function trackingWarehouseOptions(memoryLimit: string | undefined) {
  return { ...TRACKING_WAREHOUSE_OPTIONS, ...(memoryLimit === undefined ? {} : { memoryLimit }) };
}
