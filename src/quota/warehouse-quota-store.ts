import {
  addQuotaUsage,
  readQuotaLimitReports,
  readQuotaUsage,
  reportQuotaLimit,
  setQuotaUsage,
} from '../warehouse/quota-usage-store.js';
import type { WarehouseSession } from '../warehouse/warehouse.js';
import type { QuotaUsageStore } from './quota-ledger.js';

/**
 * `carrier`'s quota ledger kept in the warehouse's `quota_usage` table, through a connection of its own
 * so a reservation never waits behind a batch load.
 */
export function warehouseQuotaStore(warehouse: WarehouseSession, carrier: string): QuotaUsageStore {
  return {
    read: (day) => readQuotaUsage(warehouse, carrier, day),
    // This process is the warehouse's only writer: the limits were checked against what it read.
    reserve: async (day, alias, lookups) => {
      await addQuotaUsage(warehouse, carrier, day, alias, lookups);
      return { granted: lookups };
    },
    reportLimit: (day, alias) => reportQuotaLimit(warehouse, carrier, day, alias),
    readLimitReports: async (day) => new Set((await readQuotaLimitReports(warehouse, carrier, day)).keys()),
    release: async (day, alias, _lookups, countAfter) => {
      await setQuotaUsage(warehouse, carrier, day, alias, countAfter);
    },
  };
}
