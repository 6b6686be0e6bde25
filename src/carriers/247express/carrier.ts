import type { CarrierDefinition } from '../carrier-definition.js';
import { EXPRESS_CALLBACKS } from './callback-message.js';
import { DELAY_REASONS, ORDER_STATUSES, SETTLING_TRACKING_ERRORS, TRACKING_STEPS } from './reference-data.js';
import { EXPRESS_SNAPSHOT_MAPPING } from './snapshot-mapping.js';

export const EXPRESS_247: CarrierDefinition = {
  id: '247express',
  name: '247Express',
  statuses: ORDER_STATUSES,
  delayReasons: DELAY_REASONS,
  trackingSteps: TRACKING_STEPS,
  // Its order codes are a prefix and a counter of the order's creation (docs/carriers/247express.md).
  risingOrderCodes: true,
  settlingErrorCodes: SETTLING_TRACKING_ERRORS,
  snapshotMapping: EXPRESS_SNAPSHOT_MAPPING,
  callbacks: EXPRESS_CALLBACKS,
};
