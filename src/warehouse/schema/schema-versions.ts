import type { Migration } from './migration.js';
import { migration as baseline } from './v1-baseline.js';
import { migration as auditOrderColumns } from './v2-audit-order-columns.js';
import { migration as orderDateAndMarker } from './v3-order-date-and-marker.js';
import { migration as payoutStatements } from './v4-payout-statements.js';
import { migration as carriers } from './v5-carriers.js';
import { migration as findingMarks } from './v6-finding-marks.js';
import { migration as bankDeposits } from './v7-bank-deposits.js';
import { migration as carrierCodFacts } from './v8-carrier-cod-facts.js';
import { migration as snapshotPartitionChanges } from './v9-snapshot-partition-changes.js';

/** Every schema version, oldest first: one file each under this folder. */
export const MIGRATIONS: readonly Migration[] = [
  baseline,
  auditOrderColumns,
  orderDateAndMarker,
  payoutStatements,
  carriers,
  findingMarks,
  bankDeposits,
  carrierCodFacts,
  snapshotPartitionChanges,
];
