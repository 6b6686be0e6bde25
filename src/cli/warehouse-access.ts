import { WarehouseBusyError, WarehouseError } from '../warehouse/warehouse-errors.js';
import { Warehouse, type WarehouseOptions } from '../warehouse/warehouse.js';
import { installReportViews } from '../reports/report-views.js';
import { EXIT, UserError } from './exit-codes.js';

/**
 * Opens the warehouse for a command; a busy or broken warehouse is one line and its exit code. A
 * writable open also creates or replaces the report views, so they match this program's reports.
 */
export async function openWarehouseForCommand(path: string, options: WarehouseOptions = {}): Promise<Warehouse> {
  let warehouse: Warehouse;
  try {
    warehouse = await Warehouse.open(path, options);
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
