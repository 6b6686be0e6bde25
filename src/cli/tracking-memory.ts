import { setFlagsFromString } from 'node:v8';
import type { WarehouseOptions } from '../warehouse/warehouse.js';

/**
 * The warehouse settings of a tracking run. DuckDB holds data not yet checkpointed in memory: at the
 * general 256MB threshold a run's uncheckpointed rows reached 400 MB. Checkpointing every 32MB keeps
 * them small, and 128MB is ample for a batch's statements (what no longer fits, such as the sorted
 * work list of a million codes, spills to `<file>.tmp`); 64MB was not.
 */
export const TRACKING_WAREHOUSE_OPTIONS = { memoryLimit: '128MB', checkpointThreshold: '32MB' } as const satisfies WarehouseOptions;

/**
 * V8 lets its heap grow to several times what is live before a full collection: while tracking held
 * about 45 MB live, the heap reached 150 to 200 MB. A growing factor of 1.5 keeps it near 60 to 90 MB
 * for little more collection work (`--optimize-for-size` kept it smaller but doubled the CPU time per
 * lookup). V8 reads the factor at each collection, so setting it once the process runs takes effect.
 */
export function keepHeapSmall(): void {
  setFlagsFromString('--heap-growing-percent=50');
}
