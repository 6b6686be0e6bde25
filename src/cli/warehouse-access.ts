import { WarehouseBusyError, WarehouseError } from '../warehouse/warehouse-errors.js';
import { Warehouse, type WarehouseOptions } from '../warehouse/warehouse.js';
import { EXIT, UserError } from './exit-codes.js';

/** Opens the warehouse for a command; a busy or broken warehouse is one line and its exit code. */
export async function openWarehouseForCommand(path: string, options: WarehouseOptions = {}): Promise<Warehouse> {
  try {
    return await Warehouse.open(path, options);
  } catch (error) {
    if (error instanceof WarehouseBusyError) throw new UserError(error.message, EXIT.BUSY);
    if (error instanceof WarehouseError) throw new UserError(error.message, EXIT.FAILURE);
    throw error;
  }
}
