import { epochMsToInstant } from '../../carriers/carrier-time.js';
import type { KeyRing } from '../../carriers/client/key-ring.js';
import { findCarrier, KNOWN_CARRIERS } from '../../carriers/known-carriers.js';
import type { OrderCodeSource } from '../../sources/order-code-source.js';
import {
  appendRunInputs,
  type RunInputCounts,
  recordRejectedInputs,
  runInputCounts,
} from '../../warehouse/run-input-store.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import type { RejectsFile } from '../rejects-file.js';
import { inShard, type Shard } from './shard.js';

/** Reject codes of rows that never reach the carrier, beside the carrier's own rule codes. */
export const INPUT_REJECT = {
  UNREADABLE_ROW: 'UNREADABLE_ROW',
  UNKNOWN_ACCOUNT: 'UNKNOWN_ACCOUNT',
  UNKNOWN_CARRIER: 'UNKNOWN_CARRIER',
  ACCOUNT_REQUIRED: 'ACCOUNT_REQUIRED',
} as const;

const STAGING_BATCH = 10_000;

interface StagedRow {
  seq: number;
  orderCode: string;
  accountAlias: string | null;
  origin: string;
  rejectCode: string | null;
  rejectReason: string | null;
}

/**
 * Reads every source into the run's `run_inputs` rows, checking each code against the carrier's rules
 * and each account against the configured keys before any quota is spent. Rejected rows also go to
 * the rejects file with their source line. De-duplication happens in SQL, over the staged rows.
 *
 * With a shard, rows of other shards are skipped (not this worker's work, not rejects); they still
 * take their sequence number, so every staged row is numbered as in a run over all the codes. Rows
 * whose `carrier` column names another carrier the product knows are skipped the same way (that
 * carrier's run looks them up); a carrier it does not know is a rejected row.
 */
export async function stageInputs(
  warehouse: Warehouse,
  runId: string,
  sources: readonly OrderCodeSource[],
  keys: KeyRing,
  rejects: RejectsFile,
  spoolDir: string,
  carrier: string,
  startSeq = 0,
  shard?: Shard,
): Promise<number> {
  let seq = startSeq;
  let batch: StagedRow[] = [];
  const { checkOrderCode } = findCarrier(carrier) ?? { checkOrderCode: () => undefined };
  const flush = async () => {
    if (batch.length === 0) return;
    await appendRunInputs(warehouse, runId, batch, spoolDir, carrier);
    batch = [];
  };
  const reject = async (origin: string, orderCode: string | null, rejectCode: string, reason: string) => {
    await rejects.add({ origin, orderCode, rejectCode, reason });
    batch.push({
      seq: ++seq,
      orderCode: orderCode ?? '',
      accountAlias: null,
      origin,
      rejectCode,
      rejectReason: reason,
    });
  };

  for (const source of sources) {
    for await (const item of source.items()) {
      if (!inShard(item.kind === 'rejected' ? item.rejection.origin : item.code.orderCode, shard)) {
        seq++;
        continue;
      }
      if (item.kind === 'rejected') {
        await reject(item.rejection.origin, null, INPUT_REJECT.UNREADABLE_ROW, item.rejection.reason);
      } else {
        const { orderCode, account, origin } = item.code;
        const rowCarrier = item.code.carrier?.toLowerCase() ?? carrier;
        if (rowCarrier !== carrier && findCarrier(rowCarrier) !== undefined) {
          // Another carrier's row, left for its own run: one source can feed every carrier's.
          seq++;
          continue;
        }
        const ruleError = checkOrderCode(orderCode);
        const alias = keys.aliasFor(account);
        if (rowCarrier !== carrier) {
          await reject(
            origin,
            orderCode,
            INPUT_REJECT.UNKNOWN_CARRIER,
            `carrier ${JSON.stringify(item.code.carrier)} is not one the product knows: ${KNOWN_CARRIERS.map((known) => known.id).join(' or ')}`,
          );
        } else if (ruleError) {
          await reject(origin, orderCode, ruleError, `order code breaks the carrier's rules (${ruleError})`);
        } else if (alias === undefined) {
          if (account !== null)
            await reject(origin, orderCode, INPUT_REJECT.UNKNOWN_ACCOUNT, `no API key for account ${account}`);
          else
            await reject(
              origin,
              orderCode,
              INPUT_REJECT.ACCOUNT_REQUIRED,
              'several keys are configured and the row names no account',
            );
        } else {
          batch.push({ seq: ++seq, orderCode, accountAlias: alias, origin, rejectCode: null, rejectReason: null });
        }
      }
      if (batch.length >= STAGING_BATCH) await flush();
    }
  }
  await flush();
  return seq;
}

/**
 * Stages a run's sources (see stageInputs), finishes its rejects file, records the rejected rows in
 * the warehouse, and counts what was read, rejected and duplicated.
 */
export async function stageRunInputs(
  warehouse: Warehouse,
  runId: string,
  sources: readonly OrderCodeSource[],
  keys: KeyRing,
  rejects: RejectsFile,
  spoolDir: string,
  carrier: string,
  shard: Shard | undefined,
  now: () => number,
): Promise<RunInputCounts> {
  try {
    await stageInputs(warehouse, runId, sources, keys, rejects, spoolDir, carrier, 0, shard);
  } finally {
    await rejects.close();
  }
  await recordRejectedInputs(warehouse, runId, epochMsToInstant(now()));
  return runInputCounts(warehouse, runId);
}
