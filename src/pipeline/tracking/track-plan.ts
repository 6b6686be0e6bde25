import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QuotaLedger } from '../../quota/quota-ledger.js';
import { warehouseQuotaStore } from '../../quota/warehouse-quota-store.js';
import { countRunWorkByAccount, deleteRunInputs, runInputCounts } from '../../warehouse/run-input-store.js';
import { RejectsFile } from '../rejects-file.js';
import { newRunId } from '../run-lifecycle.js';
import { workAlias } from './select-work.js';
import { stageInputs } from './stage-inputs.js';
import type { TrackRunOptions } from './track-run.js';

export interface KeyPlan {
  readonly alias: string;
  /** Orders the run would look up with this key. */
  readonly toLookUp: number;
  /** Lookups left today for the key (its limit and the global one, less reserves and what the ledger holds). */
  readonly leftToday: number;
  /** Lookups the run would spend with the key, one per order (retries of transient failures cost more). */
  readonly wouldSpend: number;
  readonly wouldDefer: number;
}

export interface TrackPlan {
  readonly carrierDay: string;
  readonly codes: {
    readonly read: number;
    readonly rejected: number;
    readonly duplicate: number;
    readonly terminalSkipped: number;
  };
  readonly keys: readonly KeyPlan[];
  readonly total: {
    readonly toLookUp: number;
    readonly leftToday: number;
    readonly wouldSpend: number;
    readonly wouldDefer: number;
  };
  readonly maxLookups: number | null;
}

/**
 * Shares `budget` between claims taking turns, one each per turn, as a run's work list hands the
 * accounts' codes out: each gets an equal part, a claim smaller than its part gives the rest to the
 * others, and what cannot be split evenly goes to the first ones.
 */
export function shareInTurns(claims: readonly number[], budget: number): number[] {
  const shares = claims.map(() => 0);
  let left = budget;
  let open = claims.flatMap((claim, index) => (claim > 0 ? [index] : []));
  while (left > 0 && open.length > 0) {
    const each = Math.max(1, Math.floor(left / open.length));
    for (const index of open) {
      const take = Math.min(each, claims[index]! - shares[index]!, left);
      shares[index]! += take;
      left -= take;
    }
    open = open.filter((index) => shares[index]! < claims[index]!);
  }
  return shares;
}

/**
 * What a run with these options would spend per key against what is left today, without a lookup:
 * the sources are read and checked as a run would, the work selected as a run would (terminal orders
 * left out unless refreshTerminal), then the staged rows are deleted again. When the global allowance
 * or --max-lookups cannot cover every key, the keys share it in turns, as the run's work list does.
 */
export async function planTracking(
  options: Pick<
    TrackRunOptions,
    'job' | 'carrier' | 'sources' | 'keys' | 'warehouse' | 'quota' | 'refreshTerminal' | 'maxLookups' | 'now' | 'shard'
  >,
): Promise<TrackPlan> {
  const { warehouse, keys } = options;
  const ledger = new QuotaLedger(
    warehouseQuotaStore(warehouse, options.carrier),
    options.quota,
    keys.aliases,
    options.now,
    1,
  );
  await ledger.open();
  const planId = `plan-${newRunId(options.job, options.now())}`;
  const scratch = await mkdtemp(join(tmpdir(), 'parcel-recon-plan-'));
  try {
    await stageInputs(
      warehouse,
      planId,
      options.sources,
      keys,
      new RejectsFile(join(scratch, 'rejects.csv')),
      scratch,
      options.carrier,
      0,
      options.shard,
    );
    const inputs = await runInputCounts(warehouse, planId);
    const work = await countRunWorkByAccount(warehouse, planId, { refreshTerminal: options.refreshTerminal });
    const toLookUp = new Map<string, number>();
    for (const row of work.byAccount) {
      const alias = workAlias(row.accountAlias, keys);
      if (alias !== undefined) toLookUp.set(alias, (toLookUp.get(alias) ?? 0) + row.work);
    }
    const budget = Math.min(ledger.remainingTotal(), options.maxLookups ?? Number.POSITIVE_INFINITY);
    const shares = shareInTurns(
      keys.aliases.map((alias) => Math.min(toLookUp.get(alias) ?? 0, ledger.remaining(alias))),
      budget,
    );
    const plans = keys.aliases.map((alias, index): KeyPlan => {
      const orders = toLookUp.get(alias) ?? 0;
      const wouldSpend = shares[index] ?? 0;
      return {
        alias,
        toLookUp: orders,
        leftToday: ledger.remaining(alias),
        wouldSpend,
        wouldDefer: orders - wouldSpend,
      };
    });
    const sum = (pick: (plan: KeyPlan) => number) => plans.reduce((n, plan) => n + pick(plan), 0);
    return {
      carrierDay: ledger.carrierDay,
      codes: {
        read: inputs.read,
        rejected: inputs.rejected,
        duplicate: inputs.duplicate,
        terminalSkipped: work.terminalSkipped,
      },
      keys: plans,
      total: {
        toLookUp: sum((p) => p.toLookUp),
        leftToday: ledger.remainingTotal(),
        wouldSpend: sum((p) => p.wouldSpend),
        wouldDefer: sum((p) => p.wouldDefer),
      },
      maxLookups: options.maxLookups ?? null,
    };
  } finally {
    await deleteRunInputs(warehouse, planId);
    await rm(scratch, { recursive: true, force: true });
  }
}
