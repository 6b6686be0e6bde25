import { setFlagsFromString } from 'node:v8';

/**
 * The process's memory settings of a tracking run: `parcel-recon track` and the tracking benchmark take
 * them from here (its DuckDB settings are the pipeline's, tracking-warehouse-options.ts). Most are applied
 * by the process itself; the few that glibc and V8 read only at start are given by
 * bin/node-with-track-settings (TRACK_START_SETTINGS).
 */

/**
 * V8 lets its heap grow to several times what is live before a full collection; a growing factor of
 * 1.5 keeps it near what is live for little more collection work. V8 reads the factor at each
 * collection, so setting it once the process runs takes effect.
 */
const HEAP_GROWING_FLAG = '--heap-growing-percent=50';

export function keepHeapSmall(): void {
  setFlagsFromString(HEAP_GROWING_FLAG);
}

/**
 * DuckDB allocates through its own jemalloc, which by default keeps freed pages for seconds, in an
 * arena per thread, and they still count as the process's memory: one arena, with freed pages given
 * back within 100 ms and directly, keeps the process near what DuckDB uses.
 */
export const DUCKDB_ALLOCATOR_ENV = 'DUCKDB_JE_MALLOC_CONF';
export const DUCKDB_ALLOCATOR_CONF = 'narenas:1,dirty_decay_ms:100,muzzy_decay_ms:0';

/**
 * jemalloc reads its setting when DuckDB's library loads, so this must run before anything imports
 * DuckDB (see before-duckdb-loads.ts); a value already in the environment is left as it is.
 */
export function returnDuckdbMemoryPromptly(): void {
  process.env[DUCKDB_ALLOCATOR_ENV] ??= DUCKDB_ALLOCATOR_CONF;
}

/**
 * The settings that glibc and V8 read only when a process starts, so that a running process cannot
 * give them to itself: bin/node-with-track-settings starts `track` (and the tracking benchmark) with
 * these values, and a test keeps the script in agreement with them. A GLIBC_TUNABLES the operator set
 * is left as it is.
 */
export const TRACK_START_SETTINGS = {
  /**
   * Two malloc arenas rather than one per thread (libuv's and DuckDB's threads each took one and kept
   * what it had freed), and allocations of 128 KiB and more mapped on their own, so given back when freed.
   */
  glibcTunables: 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072',
  /** A young generation of 8 MB semi-spaces rather than V8's 16: less memory held for objects that die young. */
  nodeFlags: ['--max-semi-space-size=8'],
} as const;
