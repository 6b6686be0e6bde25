import { SETTLING_ERROR_CODES } from '../../carriers/known-carriers.js';
import type { KeyQuotaState } from '../../quota/quota-ledger.js';
import { type FailedOrder, lookupOutcomeCounts, type RunCounts } from '../../warehouse/run-store.js';
import type { Warehouse } from '../../warehouse/warehouse.js';

export interface RunCounters {
  ok: number;
  carrierErrors: number;
  transportErrors: number;
  deferred: number;
  carrierErrorsByCode: Record<string, number>;
  deferredByReason: Record<string, number>;
}

export function noCounters(): RunCounters {
  return { ok: 0, carrierErrors: 0, transportErrors: 0, deferred: 0, carrierErrorsByCode: {}, deferredByReason: {} };
}

export type ExitState = 'ok' | 'partial' | 'failed' | 'interrupted';

export interface TrackRunSummary {
  readonly runId: string;
  readonly job: string;
  /** True when this process resumed a run that was cut off (same run id). */
  readonly resumed: boolean;
  readonly carrierDay: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly codes: {
    readonly read: number;
    readonly rejected: number;
    readonly duplicate: number;
    readonly toLookUp: number;
  };
  readonly counters: RunCounters;
  readonly lookupsSpent: number;
  readonly quota: readonly KeyQuotaState[];
  readonly rejectsFile: string | null;
  /** Orders whose lookup failed for good (after every retry, or a carrier answer that settles nothing), the first 100. */
  readonly failedOrders: readonly FailedOrder[];
  /** How many orders failed for good in all; `failedOrders` lists the first of them. */
  readonly failedOrdersTotal: number;
  readonly exitCode: number;
  readonly exitState: ExitState;
  /** Why the run stopped sending when its circuit breaker tripped ("carrier unreachable: ..."); null when it did not. */
  readonly carrierDown: string | null;
}

/**
 * A run succeeded only when every code got an answer that settles it: a result, or a carrier answer
 * about the order itself such as ORDERCODE_NOT_FOUND. It failed when an order could not be looked up
 * after every retry (EXCEPTION included) or the carrier does not know a key, which needs the operator;
 * it is partial when orders were left for later (quota spent, --max-lookups reached, stopped).
 */
export function decideExit(counters: RunCounters, stopped: boolean): ExitState {
  const unsettled = Object.entries(counters.carrierErrorsByCode).some(
    ([code, count]) => count > 0 && !SETTLING_ERROR_CODES.includes(code),
  );
  if (counters.transportErrors > 0 || unsettled || (counters.deferredByReason.key_not_found ?? 0) > 0) return 'failed';
  if (counters.deferred > 0 || stopped) return 'partial';
  return 'ok';
}

/** A run's counters from its committed lookup_results rows (all of them when the run was resumed). */
export async function committedCounters(warehouse: Warehouse, runId: string): Promise<RunCounters> {
  const counters = noCounters();
  for (const { outcome, errorCode, count } of await lookupOutcomeCounts(warehouse, runId)) {
    if (outcome === 'ok') counters.ok += count;
    else if (outcome === 'transport_error') counters.transportErrors += count;
    else if (outcome === 'carrier_error') {
      counters.carrierErrors += count;
      counters.carrierErrorsByCode[errorCode ?? ''] = (counters.carrierErrorsByCode[errorCode ?? ''] ?? 0) + count;
    } else if (outcome === 'deferred') {
      counters.deferred += count;
      const reason = (errorCode ?? '').toLowerCase();
      counters.deferredByReason[reason] = (counters.deferredByReason[reason] ?? 0) + count;
    }
  }
  return counters;
}

/** The counts a tracking run's `runs` row keeps (and a job's, when its tracking step ran). */
export function trackRunCounts(summary: TrackRunSummary): RunCounts {
  return {
    codesRead: summary.codes.read,
    codesRejected: summary.codes.rejected,
    codesDuplicate: summary.codes.duplicate,
    codesToLookUp: summary.codes.toLookUp,
    lookedUpOk: summary.counters.ok,
    carrierErrors: summary.counters.carrierErrors,
    transportErrors: summary.counters.transportErrors,
    deferred: summary.counters.deferred,
    lookupsSpent: summary.lookupsSpent,
  };
}
