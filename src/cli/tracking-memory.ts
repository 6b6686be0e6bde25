import { setFlagsFromString } from 'node:v8';
import type { WarehouseOptions } from '../warehouse/warehouse.js';

/**
 * The warehouse settings of a tracking run. DuckDB holds data not yet checkpointed in memory: at the
 * general 256MB threshold a run's uncheckpointed rows reached 400 MB. Checkpointing every 32MB keeps
 * them small, and 64MB is enough for a batch's statements (what no longer fits spills to
 * `<file>.tmp`), since spool files are read without read_json's 32 MiB buffer (spoolFileRows): batches
 * of 4,000 answers, growing to 16,000, went through at 64MB, while 48MB ran out of memory on a batch
 * of 1,841 even after a checkpoint. At 128MB DuckDB filled the room with uncheckpointed rows, and a
 * million-code run peaked 28 MB higher.
 *
 * One DuckDB thread: a batch's statements are small, and a second thread cost more in waking and
 * handing work over than it saved (0.06 ms less CPU per lookup on one, about 8% more lookups a
 * second, alternated runs), while the lookups' main thread has the other core.
 */
export const TRACKING_WAREHOUSE_OPTIONS = {
  memoryLimit: '64MB',
  checkpointThreshold: '32MB',
  threads: 1,
} as const satisfies WarehouseOptions;

/** A tracking run's warehouse settings, with the operator's memory limit when one is given. */
export function trackingWarehouseOptions(memoryLimit: string | undefined) {
  return { ...TRACKING_WAREHOUSE_OPTIONS, ...(memoryLimit === undefined ? {} : { memoryLimit }) };
}

/**
 * V8 lets its heap grow to several times what is live before a full collection: while tracking held
 * about 45 MB live, the heap reached 150 to 200 MB. A growing factor of 1.5 keeps it near 60 to 90 MB
 * for little more collection work (`--optimize-for-size` kept it smaller but doubled the CPU time per
 * lookup). V8 reads the factor at each collection, so setting it once the process runs takes effect.
 */
export function keepHeapSmall(): void {
  setFlagsFromString('--heap-growing-percent=50');
}

/**
 * DuckDB allocates through its own jemalloc, which by default keeps freed pages for seconds and
 * hands them back lazily (MADV_FREE pages still count as the process's memory), in an arena per
 * thread: over a million lookups that retention grew to about 130 MB beyond what DuckDB had in use.
 * One arena, freed pages returned within 100 ms and directly took the peak of a million lookups from
 * 447 to 390 MB, for perhaps 0.02 ms more CPU per lookup in DuckDB's threads (within the noise of
 * alternated runs). jemalloc reads this variable when DuckDB's library loads, so it must be set
 * before anything imports DuckDB (see before-duckdb-loads.ts); a value already in the environment is
 * left as it is.
 */
export function returnDuckdbMemoryPromptly(): void {
  process.env.DUCKDB_JE_MALLOC_CONF ??= 'narenas:1,dirty_decay_ms:100,muzzy_decay_ms:0';
}
