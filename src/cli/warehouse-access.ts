import { installReportViews } from '../reports/report-views.js';
import { Warehouse, type WarehouseOptions } from '../warehouse/warehouse.js';
import { WarehouseBusyError, WarehouseError } from '../warehouse/warehouse-errors.js';
import { EXIT, UserError } from './exit-codes.js';

const BUSY_RETRY_MS = 100;

/**
 * Opens the warehouse for a command; a busy or broken warehouse is one line and its exit code.
 * `busyWaitMs` lets it wait that long for a holder that keeps the file briefly (the callback
 * receiver opens it for a few moments per load). A writable open also creates or replaces the report
 * views, so they match this program's reports.
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
  try {
    for (;;) {
      try {
        return await Warehouse.open(path, options);
      } catch (error) {
        if (!(error instanceof WarehouseBusyError) || Date.now() >= giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      }
    }
  } catch (error) {
    if (error instanceof WarehouseBusyError) {
      // DuckDB lets no other process open a file one process holds for writing, not even to read.
      const why = options.readOnly
        ? ': DuckDB lets no other process open it, even read-only, while it is written; try again once that process has finished'
        : ': one process writes the warehouse at a time; try again once that process has finished';
      throw new UserError(`${error.message}${why}`, EXIT.BUSY);
    }
    if (error instanceof WarehouseError) throw new UserError(error.message, EXIT.FAILURE);
    throw error;
  }
}
