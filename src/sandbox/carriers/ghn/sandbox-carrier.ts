import { GHN } from '../../../carriers/ghn/carrier.js';
import type { SandboxCarrier } from '../sandbox-carrier.js';
import { ghnShopId } from './ghn-orders.js';
import { GHN_SANDBOX_BASE_PATH, handleGhnRequest } from './ghn-routes.js';
import { ghnAnomalies } from './ghn-truth.js';
import { GHN_WEBHOOK_DIALECT } from './ghn-webhooks.js';

/** GHN in the sandbox: its detail and fee calls, its webhooks, and the billing anomalies planted in its orders. */
export const SANDBOX_CARRIER: SandboxCarrier = {
  id: GHN.id,
  name: GHN.name,
  basePath: GHN_SANDBOX_BASE_PATH,
  world: { ordersPerAccount: 200, codePrefix: 'G' },
  // GHN sends a webhook not answered 200 again 10 more times, 5 s apart (docs/carriers/ghn.md).
  webhooks: { dialect: GHN_WEBHOOK_DIALECT, maxAttempts: 11, retryBaseMs: 5_000 },
  handle: handleGhnRequest,
  shopOf: (account) => String(ghnShopId(account)),
  anomalies: ghnAnomalies,
};
