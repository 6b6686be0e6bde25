import type { Logger } from 'pino';
import { epochMsToInstant } from '../../carriers/carrier-time.js';
import { DefinedCarrierTracker } from '../../carriers/client/carrier-tracker.js';
import type { TransportOptions } from '../../carriers/client/carrier-transport.js';
import type { KeyRing } from '../../carriers/client/key-ring.js';
import { findCarrier } from '../../carriers/known-carriers.js';
import { diskFaultOf } from '../../errors/disk-fault.js';
import type { KeyQuotaState } from '../../quota/quota-ledger.js';
import { openQuotaLimiting, type SharedQuota } from '../../quota/quota-limiting.js';
import type { QuotaPolicy } from '../../quota/quota-policy.js';
import type { OrderCodeSource } from '../../sources/order-code-source.js';
import { deferRunWork, type RunInputCounts } from '../../warehouse/run-input-store.js';
import { failedLookups } from '../../warehouse/run-store.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { CarrierBreaker } from '../carrier-breaker.js';
import { DEFAULT_BREAKER_ATTEMPTS } from '../carrier-breaker-attempts.js';
import { RejectsFile } from '../rejects-file.js';
import {
  exitStateOfError,
  NO_COUNTS,
  type ProgressListener,
  type RunExitCodes,
  RunLifecycle,
  RunStop,
  runStartTime,
  showProgress,
} from '../run-lifecycle.js';
import type { RetryPolicy } from '../transient-retry.js';
import { LookupDispatch } from './dispatch-lookups.js';
import { ResultLoader } from './load-results.js';
import { stopReason } from './order-lookup.js';
import { deferredResult } from './result-batcher.js';
import {
  committedCounters,
  decideExit,
  type RunCounters,
  type TrackRunSummary,
  trackRunCounts,
} from './run-summary.js';
import { salvageAnswers } from './salvage-answers.js';
import { selectWork } from './select-work.js';
import { describeShard, type Shard } from './shard.js';
import { stageRunInputs } from './stage-inputs.js';

/** Failed orders a run's summary lists; `lookup_results` keeps them all. */
const LISTED_FAILURES = 100;

export interface TrackProgress {
  readonly done: number;
  readonly total: number;
  readonly counters: RunCounters;
  readonly quota: readonly KeyQuotaState[];
}

export interface TrackRunOptions {
  readonly job: string;
  readonly sources: readonly OrderCodeSource[];
  readonly keys: KeyRing;
  readonly warehouse: Warehouse;
  /** Where the run's spool and rejects file go. */
  readonly dataDir: string;
  /** The carrier whose orders the run looks up: every row it writes is this carrier's. */
  readonly carrier: string;
  readonly client: TransportOptions;
  readonly quota: QuotaPolicy;
  readonly retry: RetryPolicy;
  /** Attempts in a row without an answer from the carrier after which the run stops sending (default 50). */
  readonly breakerAttempts?: number | undefined;
  /** Results committed per warehouse transaction. */
  readonly batchSize: number;
  readonly refreshTerminal: boolean;
  readonly maxLookups?: number | undefined;
  readonly now: () => number;
  readonly logger: Logger;
  readonly progress?: ProgressListener<TrackProgress> | undefined;
  /** Aborted to stop the run: no new lookups, in-flight ones get `graceMs` to finish. */
  readonly stop?: AbortSignal | undefined;
  /** Aborted after `stop` to give up the lookups in flight at once: the run ends `interrupted`. */
  readonly interrupt?: AbortSignal | undefined;
  readonly graceMs: number;
  /** This worker's part of the codes (`--shard I/N`); all of them when unset. */
  readonly shard?: Shard | undefined;
  /** Several workers share the quota through this Redis (`--redis`). */
  readonly sharedQuota?: SharedQuota | undefined;
  /** The exit code of each way the run can end, as the command line defines them. */
  readonly exitCodes: RunExitCodes;
}

/**
 * One tracking run: stage the sources' codes (rejecting what breaks the carrier's rules), select the
 * work, look each code up within the quotas, and commit results to the warehouse in batches.
 *
 * A run of the same job, sources and carrier day that was cut off (killed: its row still says
 * running) is resumed rather than started anew: same run id, the sources staged again (rows already
 * staged are kept as they are), the answers it received and did not commit loaded (salvageAnswers),
 * and only the orders without a committed result, or deferred, looked up.
 */
export async function runTracking(options: TrackRunOptions): Promise<TrackRunSummary> {
  const { warehouse, keys, logger, now } = options;
  const startedAt = runStartTime(now);
  const source =
    options.sources.map((s) => s.description).join(' + ') +
    (options.shard ? ` (shard ${describeShard(options.shard)})` : '');
  const quota = await openQuotaLimiting({
    warehouse,
    carrier: options.carrier,
    shared: options.sharedQuota,
    policy: options.quota,
    aliases: keys.aliases,
    now,
    maxLookups: options.maxLookups,
    clientTimeoutMs: options.client.timeoutMs,
  });
  const { ledger } = quota;
  const run = await RunLifecycle.start({
    warehouse,
    job: options.job,
    source,
    carrierDay: ledger.carrierDay,
    startedAt,
    dataDir: options.dataDir,
    resumable: true,
    exitCodes: options.exitCodes,
  });
  const { runId, resumed } = run;
  const log = logger.child({ runId });
  log.info(
    {
      job: options.job,
      sources: options.sources.map((s) => s.description),
      carrierDay: ledger.carrierDay,
      keys: keys.aliases,
      resumed,
    },
    resumed ? 'run resumed: it was cut off before it finished' : 'run started',
  );

  const rejects = new RejectsFile(run.rejectsPath);
  let inputs: RunInputCounts;
  try {
    inputs = await stageRunInputs(
      warehouse,
      runId,
      options.sources,
      keys,
      rejects,
      run.scratchDir,
      options.carrier,
      options.shard,
      now,
    );
  } catch (error) {
    // A source that cannot be read ends the run before any lookup; the run row says so.
    await run.finish(now(), {
      counts: NO_COUNTS,
      exitState: exitStateOfError(error),
      summary: { error: error instanceof Error ? error.message : String(error) },
    });
    throw error;
  }
  if (resumed) {
    const salvaged = await salvageAnswers({
      warehouse,
      runId,
      scratchDir: run.scratchDir,
      dataDir: options.dataDir,
      now,
      carrier: options.carrier,
    });
    if (salvaged > 0) log.info({ answers: salvaged }, 'answers the cut-off run received loaded: not looked up again');
  }
  const work = await selectWork(warehouse, runId, keys, {
    refreshTerminal: options.refreshTerminal,
    workDir: run.scratchDir,
  });
  log.info({ ...inputs, toLookUp: work.total }, 'inputs staged');

  const definition = findCarrier(options.carrier);
  if (definition === undefined) throw new RangeError(`no tracker for carrier ${options.carrier}`);
  const tracker = new DefinedCarrierTracker(definition, options.client, options.keys);
  const limiter = quota.startLimiter();
  quota.lost?.addEventListener(
    'abort',
    () => log.error('lost the connection to Redis: no more lookups; what is done is committed'),
    { once: true },
  );
  const breaker = new CarrierBreaker(options.breakerAttempts ?? DEFAULT_BREAKER_ATTEMPTS);
  const stop = new RunStop({
    signals: [options.stop, quota.lost, breaker.signal],
    graceMs: options.graceMs,
    interrupt: options.interrupt,
    onStop: () => {
      if (breaker.tripped === undefined)
        return log.warn({ graceMs: options.graceMs }, 'stop requested: no new lookups, finishing those in flight');
      log.error({ error: breaker.tripped.message }, 'no more lookups: the orders left are deferred');
      // Lookups waiting for a slot are dropped at once: none of them is sent.
      void limiter.stop();
    },
    // Lookups still waiting for a slot are dropped: a clustered limiter whose Redis is gone never grants one.
    onAbandon: () => void limiter.stop(),
  });
  const results = new ResultLoader({
    warehouse,
    runId,
    spoolDir: run.scratchDir,
    dataDir: options.dataDir,
    batchSize: options.batchSize,
    now,
    carrier: options.carrier,
    log,
    afterCommit: quota.recordSharedCounts,
  });
  const dispatch = new LookupDispatch({
    work,
    limiter,
    results,
    log,
    // Enough to keep every slot busy and its groups full.
    windowSize: options.quota.maxConcurrent * 4,
    lookup: {
      tracker,
      limiter,
      ledger,
      retry: options.retry,
      breaker,
      stopping: stop.stopping,
      abandon: stop.abandon,
      onRetry: (orderCode, failure, attempt) =>
        log.debug({ orderCode, failure: failure.code, attempt }, 'lookup retried'),
      onPassedAnswer: (orderCode, alias, body) => results.addPassedAnswer(orderCode, alias, body),
    },
  });
  const quotaStates = () => keys.aliases.map((alias) => ledger.state(alias));
  const hideProgress = showProgress(options.progress, () => ({
    done: dispatch.done,
    total: work.total,
    counters: dispatch.counters,
    quota: quotaStates(),
  }));
  try {
    try {
      await dispatch.run();
      await results.commitRest();
      // An interrupted run gives up at once: the codes it did not reach keep no row, and the next run takes them up all the same.
      if (stop.requested && !stop.interrupted)
        await deferRunWork(warehouse, runId, {
          refreshTerminal: options.refreshTerminal,
          finishedAt: epochMsToInstant(now()),
          ...deferredResult(stopReason({ breaker })),
        });
    } finally {
      results.close();
      stop.dispose();
      hideProgress();
      await limiter.stop();
      await tracker.close();
      await quota.close(log);
    }
  } catch (error) {
    const diskFault = diskFaultOf(error);
    if (diskFault === undefined) throw error;
    await run.endOnDiskFault(now(), diskFault);
    throw diskFault;
  }

  const finishedAt = now();
  const failed = await failedLookups(warehouse, runId, LISTED_FAILURES);
  const counters = await committedCounters(warehouse, runId);
  // A run whose breaker tripped broke, whatever else stopped it: the carrier needs the operator.
  const exitState = breaker.tripped
    ? 'failed'
    : stop.interrupted
      ? 'interrupted'
      : decideExit(counters, stop.requested);
  const summary: TrackRunSummary = {
    runId,
    job: options.job,
    resumed,
    carrierDay: ledger.carrierDay,
    ...run.timing(finishedAt),
    codes: { ...inputs, toLookUp: work.total },
    counters,
    lookupsSpent: ledger.spentThisRun(),
    quota: quotaStates(),
    rejectsFile: rejects.count > 0 ? rejects.path : null,
    failedOrders: failed.listed,
    failedOrdersTotal: failed.total,
    exitCode: run.exitCodeOf(exitState),
    exitState,
    carrierDown: breaker.tripped?.message ?? null,
  };
  await run.finish(finishedAt, { counts: trackRunCounts(summary), exitState, summary });
  log.info({ summary }, 'run finished');
  return summary;
}
