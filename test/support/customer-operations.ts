/** What the price and images tests share: run options against a sandbox, and price requests for its orders. */
import { DEFAULT_MAX_ANSWER_BYTES } from '../../src/carriers/client/answer-size.js';
import type { KeyRing } from '../../src/carriers/client/key-ring.js';
import { RUN_EXIT_CODES } from '../../src/errors/exit-codes.js';
import type { CustomerRunOptions } from '../../src/pipeline/customer-operation-run.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { placeFreshWarehouse } from './fresh-warehouse.js';
import type { TrackingWorkspace } from './tracking-harness.js';

export function customerRunOptions(
  sandbox: RunningSandbox,
  workspace: TrackingWorkspace,
  keys: KeyRing,
  overrides: Partial<CustomerRunOptions> = {},
): CustomerRunOptions {
  return {
    job: 'test',
    carrier: '247express',
    keys,
    client: {
      baseUrl: sandbox.url,
      authHeader: 'ApiKey',
      timeoutMs: 2_000,
      maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
      connections: 4,
    },
    pace: { requestsPerSecond: 1_000, concurrency: 2 },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    dataDir: workspace.dir,
    batchSize: 50,
    now: () => sandbox.state.clock.now(),
    logger: workspace.logger,
    exitCodes: RUN_EXIT_CODES,
    ...overrides,
  };
}

/** Runs `work` on the workspace's warehouse, opened for writing, and closes it. */
export async function withWarehouse<T>(
  workspace: TrackingWorkspace,
  work: (warehouse: Warehouse) => Promise<T>,
): Promise<T> {
  await placeFreshWarehouse(workspace.dbPath);
  const warehouse = await Warehouse.open(workspace.dbPath);
  try {
    return await work(warehouse);
  } finally {
    await warehouse.close();
  }
}

/** The header of a price request CSV in snake_case, with the order code and account. */
export const PRICE_REQUEST_CSV_HEADER = [
  'to_province_name',
  'to_district_name',
  'to_ward_name',
  'length',
  'width',
  'height',
  'real_weight',
  'client_hub_id',
  'service_type_id',
  'order_code',
  'account',
] as const;

/** A price request CSV, one valid row per order of the sandbox, with its order code and account. */
export function priceRequestRows(sandbox: RunningSandbox): string[][] {
  const header = [...PRICE_REQUEST_CSV_HEADER];
  const rows = [...sandbox.state.truth.orders()].map((order) => {
    const plan = sandbox.state.world.findOrder(order.orderCode)!;
    return [
      order.destination.provinceName,
      order.destination.districtName,
      order.destination.wardName,
      plan.length,
      plan.width,
      plan.height,
      plan.realWeight,
      order.clientHubID,
      order.serviceTypeID,
      order.orderCode,
      order.account,
    ].map(String);
  });
  return [header, ...rows];
}
