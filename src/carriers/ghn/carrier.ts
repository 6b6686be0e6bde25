import type { CarrierDefinition } from '../carrier-definition.js';
import { GHN_FAILURE_REASONS, GHN_STATUSES } from './reference-data.js';

export const GHN: CarrierDefinition = {
  id: 'ghn',
  name: 'GHN',
  statuses: GHN_STATUSES,
  delayReasons: GHN_FAILURE_REASONS,
  // GHN reports no handling steps between its statuses.
  trackingSteps: [],
  // GHN's order codes are letters and digits in no order (docs/carriers/ghn.md).
  risingOrderCodes: false,
};
