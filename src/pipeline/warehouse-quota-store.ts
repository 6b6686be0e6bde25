import type { QuotaUsageStore } from '../quota/quota-ledger.js';
import { addQuotaUsage, raiseQuotaUsage, readQuotaUsage, setQuotaUsage } from '../warehouse/quota-usage-store.js';
import type { WarehouseSession } from '../warehouse/warehouse.js';

/**
 * The quota ledger kept in the warehouse's `quota_usage` table, through a session of its own so a
 * reservation never waits behind a batch load.
 */
export function warehouseQuotaStore(warehouse: WarehouseSession): QuotaUsageStore {
  return {
    read: (day) => readQuotaUsage(warehouse, day),
    add: async (day, alias, lookups) => {
      await addQuotaUsage(warehouse, day, alias, lookups);
    },
    raise: async (day, alias, atLeast) => {
      await raiseQuotaUsage(warehouse, day, alias, atLeast);
    },
    set: async (day, alias, lookups) => {
      await setQuotaUsage(warehouse, day, alias, lookups);
    },
  };
}
