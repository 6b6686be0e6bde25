import type { CarrierDefinition } from '../carrier-definition.js';
import { CHARGE_CHECK_NAMES } from '../charge-check-names.js';
import { EXPRESS_CALLBACKS } from './callback-message.js';
import { EXPRESS_ORDER_IMAGES, EXPRESS_PRICE_QUOTES } from './customer-operations.js';
import { checkOrderCode } from './order-code.js';
import {
  DELAY_REASONS,
  DOCUMENTED_LIMITS,
  FAILED_ATTEMPT_STATUSES,
  ORDER_STATUSES,
  PRICE_SERVICE,
  PUBLISHED_PRICING,
  SETTLING_TRACKING_ERRORS,
  TRACKING_ERROR,
  TRACKING_STEPS,
} from './reference-data.js';
import { EXPRESS_SNAPSHOT_MAPPING } from './snapshot-mapping.js';
import { EXPRESS_STATEMENT_TEMPLATE } from './statement-template.js';
import { EXPRESS_TRACKING } from './tracking-lookup.js';

export const EXPRESS_247: CarrierDefinition = {
  id: '247express',
  name: '247Express',
  statuses: ORDER_STATUSES,
  delayReasons: DELAY_REASONS,
  trackingSteps: TRACKING_STEPS,
  // Its order codes are a prefix and a counter of the order's creation (docs/carriers/247express.md).
  risingOrderCodes: true,
  settlingErrorCodes: SETTLING_TRACKING_ERRORS,
  unknownOrderErrorCodes: [
    TRACKING_ERROR.ORDERCODE_NOT_FOUND,
    TRACKING_ERROR.ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT,
  ],
  checkOrderCode,
  failedAttemptStatuses: FAILED_ATTEMPT_STATUSES,
  tracking: EXPRESS_TRACKING,
  snapshotMapping: EXPRESS_SNAPSHOT_MAPPING,
  callsPerLookup: 1,
  quota: {
    callsPerKeyPerDay: DOCUMENTED_LIMITS.lookupsPerKeyPerDay,
    callsPerDay: DOCUMENTED_LIMITS.lookupsPerDay,
    documented: true,
  },
  accountShops: false,
  // Its answer gives every part of its published price relations.
  charges: {
    volumetricDivisor: PUBLISHED_PRICING.volumetricDivisor,
    checks: CHARGE_CHECK_NAMES,
    publishedShares: { fuel: PUBLISHED_PRICING.fuelShare, vat: PUBLISHED_PRICING.vatShare },
    farRegionServiceId: PRICE_SERVICE.FAR_REGION,
  },
  statementTemplate: EXPRESS_STATEMENT_TEMPLATE,
  callbacks: EXPRESS_CALLBACKS,
  priceQuotes: EXPRESS_PRICE_QUOTES,
  orderImages: EXPRESS_ORDER_IMAGES,
};
