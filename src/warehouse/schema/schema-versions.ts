import type { Migration } from './migration.js';
import { migration as referenceData } from './v1-reference-data.js';
import { migration as orders } from './v2-orders.js';
import { migration as runs } from './v3-runs.js';
import { migration as quotaUsage } from './v4-quota-usage.js';
import { migration as orderHistory } from './v5-order-history.js';
import { migration as callbackEvents } from './v6-callback-events.js';
import { migration as priceQuotesAndImages } from './v7-price-quotes-and-images.js';
import { migration as failuresWithUnknownReason } from './v8-failures-with-unknown-reason.js';
import { migration as quoteAndImageFailures } from './v9-quote-and-image-failures.js';
import { migration as callbackMerge } from './v10-callback-merge.js';
import { migration as historyWithoutKeys } from './v12-history-without-keys.js';

/** Every schema version, oldest first: one file each under this folder. */
export const MIGRATIONS: readonly Migration[] = [
  referenceData,
  orders,
  runs,
  quotaUsage,
  orderHistory,
  callbackEvents,
  priceQuotesAndImages,
  failuresWithUnknownReason,
  quoteAndImageFailures,
  callbackMerge,
  historyWithoutKeys,
];
