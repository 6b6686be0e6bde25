/**
 * The command this process runs, as its command line names it (`parcel-recon track ...`), known before
 * commander parses anything: main.ts loads only that command's module, and a `track` process sets
 * DuckDB's allocator before DuckDB's library loads. bin/parcel-recon makes the same decision for the
 * settings a process can only be started with.
 */
export const INVOKED_COMMAND: string | undefined = process.argv[2];

/** Whether this process runs `parcel-recon track`. */
export const RUNS_TRACK = INVOKED_COMMAND === 'track';

/** Whether this process only prints the version (`parcel-recon --version`): it needs no command's module. */
export const ASKS_VERSION_ONLY =
  process.argv.length === 3 && (INVOKED_COMMAND === '--version' || INVOKED_COMMAND === '-V');
