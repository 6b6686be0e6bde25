import { UserError } from '../errors/user-error.js';
import { installReportViews } from '../reports/report-views.js';
import type { Settings } from '../settings/catalog.js';
import type { ResolvedSettings } from '../settings/resolve-settings.js';
import { readSnapshot, type SnapshotWindow } from '../warehouse/parquet-snapshot-reader.js';
import { Warehouse, type WarehouseOptions } from '../warehouse/warehouse.js';
import { WarehouseBusyError } from '../warehouse/warehouse-errors.js';

const BUSY_RETRY_MS = 100;

/**
 * Opens the warehouse for a command or a job. `busyWaitMs` lets it wait that long for a holder that
 * keeps the file briefly (the callback receiver opens it for a few moments per load). A writable open
 * also creates or replaces the report views, so they match this program's reports.
 */
export async function openWarehouseForCommand(
  path: string,
  options: WarehouseOptions = {},
  busyWaitMs = 0,
): Promise<Warehouse> {
  const warehouse = await openWaiting(path, options, busyWaitMs);
  if (!options.readOnly) {
    try {
      await installReportViews(warehouse);
    } catch (error) {
      await warehouse.close();
      throw error;
    }
  }
  return warehouse;
}

async function openWaiting(path: string, options: WarehouseOptions, busyWaitMs: number): Promise<Warehouse> {
  const giveUpAt = Date.now() + busyWaitMs;
  for (;;) {
    try {
      return await Warehouse.open(path, options);
    } catch (error) {
      if (!(error instanceof WarehouseBusyError) || Date.now() >= giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
    }
  }
}

/**
 * Runs `work` over what a reading command reads, then closes it: the snapshot `--snapshot` names
 * (which no writer holds; read whole, see readSnapshot), else the warehouse the settings name, opened
 * read-only. `window`, a report's days, lets a snapshot's reads skip the partitions outside them.
 */
export async function withReading<T>(
  settings: ResolvedSettings<Settings>,
  snapshot: string | undefined,
  options: Omit<WarehouseOptions, 'readOnly'>,
  busyWaitMs: number,
  work: (warehouse: Warehouse) => Promise<T>,
  window?: SnapshotWindow,
): Promise<T> {
  if (snapshot !== undefined) {
    if (settings.origins.warehouse.kind === 'flag') throw new UserError('--snapshot and --db: give one of them');
    return readSnapshot(snapshot, options, window, work);
  }
  const warehouse = await openWarehouseForCommand(
    settings.values.warehouse,
    { ...options, readOnly: true },
    busyWaitMs,
  );
  try {
    return await work(warehouse);
  } finally {
    await warehouse.close();
  }
}
