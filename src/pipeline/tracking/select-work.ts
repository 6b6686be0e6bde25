import type { KeyRing } from '../../carriers/client/key-ring.js';
import { countRunWork, type RunWorkItem, streamRunWork } from '../../warehouse/run-input-store.js';
import type { Warehouse } from '../../warehouse/warehouse.js';

/** A staged code to look up, with the key it is looked up with. */
export interface WorkOrder {
  readonly item: RunWorkItem;
  readonly alias: string;
}

/** The codes a run looks up: how many, and the codes in chunks, never-seen and least recently seen orders first. */
export interface WorkList {
  readonly total: number;
  chunks(): AsyncGenerator<WorkOrder[]>;
}

/** The key a staged code is looked up with: its own, else the default key; none when neither exists. */
export function workAlias(accountAlias: string | null, keys: KeyRing): string | undefined {
  return accountAlias ?? keys.aliasFor(null);
}

/**
 * The run's work list: each distinct staged code without a committed result (or deferred), terminal
 * orders left out unless `refreshTerminal`. Its parquet file goes in `workDir`.
 */
export async function selectWork(
  warehouse: Warehouse,
  runId: string,
  keys: KeyRing,
  options: { readonly refreshTerminal: boolean; readonly workDir: string },
): Promise<WorkList> {
  const total = await countRunWork(warehouse, runId, { refreshTerminal: options.refreshTerminal });
  return {
    total,
    async *chunks() {
      for await (const chunk of streamRunWork(warehouse, runId, options)) {
        const orders: WorkOrder[] = [];
        for (const item of chunk) {
          const alias = workAlias(item.accountAlias, keys);
          if (alias !== undefined) orders.push({ item, alias });
        }
        yield orders;
      }
    },
  };
}
