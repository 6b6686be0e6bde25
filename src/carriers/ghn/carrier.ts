import type { CarrierDefinition } from '../carrier-definition.js';
import { GHN_ERROR_KINDS } from './answer-errors.js';
import { checkGhnOrderCode } from './order-code.js';
import {
  GHN_FAILED_ATTEMPT_STATUSES,
  GHN_FAILURE_REASONS,
  GHN_QUOTA,
  GHN_STATUSES,
  GHN_VOLUMETRIC_DIVISOR_KG,
} from './reference-data.js';
import { GHN_SNAPSHOT_MAPPING } from './snapshot-mapping.js';
import { GHN_STATEMENT_TEMPLATE } from './statement-template.js';
import { GHN_TRACKING } from './tracking-lookup.js';
import { GHN_WEBHOOKS } from './webhook-message.js';

export const GHN: CarrierDefinition = {
  id: 'ghn',
  name: 'GHN',
  statuses: GHN_STATUSES,
  delayReasons: GHN_FAILURE_REASONS,
  // GHN reports no handling steps between its statuses.
  trackingSteps: [],
  // GHN's order codes are letters and digits in no order (docs/carriers/ghn.md).
  risingOrderCodes: false,
  settlingErrorCodes: GHN_ERROR_KINDS.filter((kind) => kind.settles).map((kind) => kind.code),
  // GHN answers one text for an order it does not have and for another shop's (docs/carriers/ghn.md).
  unknownOrderErrorCodes: ['GHN_ORDER_NOT_FOUND'],
  checkOrderCode: checkGhnOrderCode,
  failedAttemptStatuses: GHN_FAILED_ATTEMPT_STATUSES,
  tracking: GHN_TRACKING,
  snapshotMapping: GHN_SNAPSHOT_MAPPING,
  // The detail, then the fees (tracking-lookup.ts); the fee call asks for the shop beside the token.
  callsPerLookup: 2,
  quota: GHN_QUOTA,
  accountShops: true,
  charges: {
    volumetricDivisor: GHN_VOLUMETRIC_DIVISOR_KG,
    // Its fees add to its payments; its chargeable weight the product computes, and it publishes no
    // fuel or VAT share, no far-region line, and no quote the product keeps.
    checks: [
      'lines_sum',
      'cal_weight',
      'return_not_returned',
      'cancelled_charged',
      'changed_after_delivery',
      'invoice',
    ],
  },
  statementTemplate: GHN_STATEMENT_TEMPLATE,
  callbacks: GHN_WEBHOOKS,
};
