import type { CarrierDefinition } from '../carrier-definition.js';
import { GHN_ERROR_KINDS } from './answer-errors.js';
import { GHN_FAILURE_REASONS, GHN_STATUSES } from './reference-data.js';
import { GHN_SNAPSHOT_MAPPING } from './snapshot-mapping.js';
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
  snapshotMapping: GHN_SNAPSHOT_MAPPING,
  callbacks: GHN_WEBHOOKS,
};
