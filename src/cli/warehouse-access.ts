import { WarehouseBusyError, WarehouseError } from '../warehouse/warehouse-errors.js';
import { Warehouse, type WarehouseOptions } from '../warehouse/warehouse.js';
import { EXIT, UserError } from './exit-codes.js';

/** Opens the warehouse for a command; a busy or broken warehouse is one line and its exit code. */
export async function openWarehouseForCommand(path: string, options: WarehouseOptions = {}): Promise<Warehouse> {
  try {
    return await Warehouse.open(path, options);
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
