import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Bottleneck from 'bottleneck';
import type { Logger } from 'pino';
import type { KeyRing } from '../carrier/client/key-ring.js';
import { TrackingClient, type TrackingClientOptions } from '../carrier/client/tracking-client.js';
import { carrierDayOf, epochMsToInstant, formatCarrierDateTime } from '../carrier/contract.js';
import { type LimiterCluster, LookupLimiter } from '../quota/lookup-limiter.js';
import { type KeyQuotaState, QuotaLedger } from '../quota/quota-ledger.js';
import type { QuotaPolicy } from '../quota/quota-policy.js';
import type { SharedRedis } from '../quota/redis-connection.js';
import { redisQuotaStore } from '../quota/redis-quota-store.js';
import { type OrderCodeSource, SourceError } from '../sources/order-code-source.js';
import { raiseQuotaUsageRows, readQuotaUsage } from '../warehouse/quota-usage-store.js';
import {
  countRunWork,
  type RunWorkItem,
  recordRejectedInputs,
  runInputCounts,
  streamRunWork,
} from '../warehouse/run-input-store.js';
import { failedLookups, findUnfinishedRun, finishRun, lookupOutcomeCounts, startRun } from '../warehouse/run-store.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { DispatchWindow } from './dispatch-window.js';
import { EXIT_CODE } from './exit-codes.js';
import { stageInputs } from './input-staging.js';
import { lookUpOrder, type OrderLookupContext, type OrderOutcome, type RetryPolicy } from './order-lookup.js';
import { RejectsFile } from './rejects-file.js';
import { ResultBatcher } from './result-batcher.js';
import { decideExit, type RunCounters, type TrackRunSummary } from './run-summary.js';
import { describeShard, type Shard } from './shard.js';
import { warehouseQuotaStore } from './warehouse-quota-store.js';

export interface TrackProgress {
  readonly done: number;
  readonly total: number;
  readonly counters: RunCounters;
  readonly quota: readonly KeyQuotaState[];
}

/** Told how a run goes: a progress bar on a terminal, periodic log lines otherwise. */
export interface ProgressListener {
  start(progress: TrackProgress): void;
  update(progress: TrackProgress): void;
  stop(): void;
}

export interface TrackRunOptions {
  readonly job: string;
  readonly sources: readonly OrderCodeSource[];
  readonly keys: KeyRing;
  readonly warehouse: Warehouse;
  /** Where the run's spool and rejects file go. */
  readonly dataDir: string;
  readonly client: TrackingClientOptions;
  readonly quota: QuotaPolicy;
  readonly retry: RetryPolicy;
  /** Results committed per warehouse transaction. */
  readonly batchSize: number;
  readonly refreshTerminal: boolean;
  readonly maxLookups?: number | undefined;
  readonly now: () => number;
  readonly logger: Logger;
  readonly progress?: ProgressListener | undefined;
  /** Aborted to stop the run: no new lookups, in-flight ones get `graceMs` to finish. */
  readonly stop?: AbortSignal | undefined;
  readonly graceMs: number;
  /** This worker's part of the codes (`--shard I/N`); all of them when unset. */
  readonly shard?: Shard | undefined;
  /** Several workers share the quota through this Redis (`--redis`). */
  readonly sharedQuota?: SharedQuota | undefined;
}

export interface SharedQuota {
  readonly redis: SharedRedis;
  /** Prefix of every key this product writes in Redis. */
  readonly prefix: string;
}

/** A shared lookup that has not finished in this long belongs to a dead worker: its capacity comes back. */
const SHARED_JOB_MARGIN_MS = 5_000;

const PROGRESS_INTERVAL_MS = 500;

export function newRunId(job: string, nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').slice(0, 15);
  return `${job}-${stamp}Z-${randomBytes(3).toString('hex')}`;
}

/**
 * Lookups the ledger first reserves ahead per key: together no more than the lookups in flight at
 * once. The ledger grows a key's chunk (see MAX_RESERVATION_GROWTH) only when its writes fall behind.
 */
function reservationChunk(policy: QuotaPolicy, keys: KeyRing): number {
  return Math.max(1, Math.floor(policy.maxConcurrent / Math.max(1, keys.aliases.length)));
}

/** A run's counters from its committed lookup_results rows (all of them when the run was resumed). */
async function committedCounters(warehouse: Warehouse, runId: string): Promise<RunCounters> {
  const counters: RunCounters = {
    ok: 0,
    carrierErrors: 0,
    transportErrors: 0,
    deferred: 0,
    carrierErrorsByCode: {},
    deferredByReason: {},
  };
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

/**
 * One tracking run: stage the sources' codes (rejecting what breaks the carrier's rules), look each
 * distinct code up within the quotas, and commit results to the warehouse in batches.
 *
 * A run of the same job, sources and carrier day that was cut off (killed: its row still says
 * running) is resumed rather than started anew: same run id, the sources staged again (rows already
 * staged are kept as they are), and only the orders without a committed result, or deferred, looked up.
 */
export async function runTracking(options: TrackRunOptions): Promise<TrackRunSummary> {
  const { warehouse, keys, logger, now } = options;
  const startedAt = now();
  const startedClock = performance.now();
  const source =
    options.sources.map((s) => s.description).join(' + ') +
    (options.shard ? ` (shard ${describeShard(options.shard)})` : '');

  const quotaSession = await warehouse.openSession();
  const shared = options.sharedQuota;
  let store = warehouseQuotaStore(quotaSession);
  if (shared) {
    const redisStore = redisQuotaStore(shared.redis.client, shared.prefix);
    // What this warehouse already counted today is a floor for the shared ledger (a Redis that lost its data, a run before --redis).
    const today = carrierDayOf(now(), options.quota.dayUtcOffsetMinutes);
    await redisStore.floor(today, await readQuotaUsage(quotaSession, today));
    store = redisStore;
  }
  // Shared, the ledger reserves exactly what a group of lookups is about to spend: nothing sits reserved in one worker while another is refused.
  const ledger = new QuotaLedger(
    store,
    options.quota,
    keys.aliases,
    now,
    shared ? 0 : reservationChunk(options.quota, keys),
  );
  await ledger.open();
  const resumedRunId = await findUnfinishedRun(warehouse, { job: options.job, carrierDay: ledger.carrierDay, source });
  const runId = resumedRunId ?? newRunId(options.job, startedAt);
  const spoolDir = join(options.dataDir, 'spool', runId);
  const rejects = new RejectsFile(join(options.dataDir, 'rejects', `${runId}.csv`));
  const log = logger.child({ runId });
  await startRun(warehouse, {
    runId,
    job: options.job,
    source,
    startedAt: epochMsToInstant(startedAt),
    carrierDay: ledger.carrierDay,
  });
  log.info(
    {
      job: options.job,
      sources: options.sources.map((s) => s.description),
      carrierDay: ledger.carrierDay,
      keys: keys.aliases,
      resumed: resumedRunId !== undefined,
    },
    resumedRunId === undefined ? 'run started' : 'run resumed: it was cut off before it finished',
  );

  try {
    await stageInputs(warehouse, runId, options.sources, keys, rejects, spoolDir, 0, options.shard);
  } catch (error) {
    // A source that cannot be read ends the run before any lookup; the run row says so.
    const badInput = error instanceof SourceError;
    await rejects.close();
    await finishRun(warehouse, runId, {
      finishedAt: epochMsToInstant(now()),
      counts: {
        codesRead: 0,
        codesRejected: 0,
        codesDuplicate: 0,
        codesToLookUp: 0,
        lookedUpOk: 0,
        carrierErrors: 0,
        transportErrors: 0,
        deferred: 0,
        lookupsSpent: 0,
      },
      exitCode: badInput ? EXIT_CODE.BAD_INPUT : EXIT_CODE.FAILURE,
      exitState: badInput ? 'bad_input' : 'failed',
      summary: { error: error instanceof Error ? error.message : String(error) },
    });
    throw error;
  }
  await rejects.close();
  await recordRejectedInputs(warehouse, runId, epochMsToInstant(now()));
  const inputs = await runInputCounts(warehouse, runId);
  const total = await countRunWork(warehouse, runId, { refreshTerminal: options.refreshTerminal });
  log.info(
    { read: inputs.read, rejected: inputs.rejected, duplicate: inputs.duplicate, toLookUp: total },
    'inputs staged',
  );

  const counters: RunCounters = {
    ok: 0,
    carrierErrors: 0,
    transportErrors: 0,
    deferred: 0,
    carrierErrorsByCode: {},
    deferredByReason: {},
  };
  const client = new TrackingClient(options.client);
  let cluster: LimiterCluster | undefined;
  if (shared) {
    cluster = {
      // Its own connection (Bottleneck adds a subscriber duplicated from it), connecting at once and never reconnecting either.
      connection: new Bottleneck.IORedisConnection({ client: shared.redis.client.duplicate({ lazyConnect: false }) }),
      idPrefix: `${shared.prefix}:limits:${ledger.carrierDay}`,
      expirationMs: options.client.timeoutMs + SHARED_JOB_MARGIN_MS,
    };
    shared.redis.lost.addEventListener(
      'abort',
      () => log.error('lost the connection to Redis: no more lookups; what is done is committed'),
      { once: true },
    );
  }
  const limiter = new LookupLimiter(ledger, options.quota, now, options.maxLookups, cluster);
  // The counts this worker last saw in Redis, into its own warehouse at each batch and at the end: the merge takes the largest.
  const recordSharedCounts = () =>
    shared ? raiseQuotaUsageRows(quotaSession, ledger.carrierDay, ledger.storedCounts()) : Promise.resolve();
  const abandon = new AbortController();
  // Every request in flight listens to it.
  setMaxListeners(0, abandon.signal);
  const stopSignals = [options.stop, shared?.redis.lost].filter(
    (signal): signal is AbortSignal => signal !== undefined,
  );
  const stopping = AbortSignal.any(stopSignals);
  // Every lookup waiting to retry listens to it.
  setMaxListeners(0, stopping);
  const batcher = new ResultBatcher(warehouse, runId, spoolDir, options.dataDir, now);
  const stopLoadRetryLog = warehouse.onLoadRetry((what) =>
    log.warn(
      { what },
      'DuckDB ran out of memory loading a batch: checkpointed and loading it again (a smaller --batch-size or a larger --memory-limit avoids it)',
    ),
  );
  const quotaStates = () => keys.aliases.map((alias) => ledger.state(alias));
  let done = 0;
  const progress = () => ({ done, total, counters, quota: quotaStates() });

  const context: OrderLookupContext = {
    client,
    limiter,
    ledger,
    keys,
    retry: options.retry,
    stopping,
    abandon: abandon.signal,
    onRetry: (orderCode, failure, attempt) =>
      log.debug({ orderCode, failure: failure.code, attempt }, 'lookup retried'),
  };
  const record = (item: RunWorkItem, alias: string, outcome: OrderOutcome) => {
    const { orderCode } = item;
    done++;
    batcher.add(orderCode, alias, item.origin, outcome, item.storedBefore);
    switch (outcome.kind) {
      case 'ok':
        counters.ok++;
        break;
      case 'carrier_error':
        counters.carrierErrors++;
        counters.carrierErrorsByCode[outcome.errorCode] = (counters.carrierErrorsByCode[outcome.errorCode] ?? 0) + 1;
        break;
      case 'transport_error':
        counters.transportErrors++;
        log.warn(
          { orderCode, account: alias, errorCode: outcome.errorCode, attempts: outcome.attempts },
          'lookup failed for good',
        );
        break;
      case 'deferred':
        counters.deferred++;
        counters.deferredByReason[outcome.reason] = (counters.deferredByReason[outcome.reason] ?? 0) + 1;
        break;
    }
  };

  options.progress?.start(progress());
  const ticker = setInterval(() => options.progress?.update(progress()), PROGRESS_INTERVAL_MS);
  const stopListener = () => {
    log.warn({ graceMs: options.graceMs }, 'stop requested: no new lookups, finishing those in flight');
    setTimeout(() => {
      abandon.abort();
      // Lookups still waiting for a slot are dropped: a clustered limiter whose Redis is gone never grants one.
      void limiter.stop();
    }, options.graceMs).unref();
  };
  stopping.addEventListener('abort', stopListener, { once: true });

  // Orders handed to the limiter at once: enough to keep every slot busy and its groups full.
  const window = new DispatchWindow(options.quota.maxConcurrent * 4);
  try {
    for await (const chunk of streamRunWork(warehouse, runId, {
      refreshTerminal: options.refreshTerminal,
      workDir: spoolDir,
    })) {
      for (const item of chunk) {
        const alias = item.accountAlias ?? keys.aliasFor(null);
        if (alias === undefined) continue;
        if (stopping.aborted) {
          record(item, alias, { kind: 'deferred', reason: 'stopping', attempts: 0 });
        } else if (limiter.isSpent(alias)) {
          record(item, alias, { kind: 'deferred', reason: limiter.spentReason(alias), attempts: 0 });
        } else {
          await window.enter();
          void lookUpOrder(context, item.orderCode, alias)
            .catch((error: unknown): OrderOutcome => {
              // Not a carrier or transport failure: a fault of this program. The order is listed as failed and the run goes on.
              log.error(
                { orderCode: item.orderCode, error: error instanceof Error ? error.message : String(error) },
                'lookup broke',
              );
              return {
                kind: 'transport_error',
                errorCode: 'INTERNAL',
                errorMessage: error instanceof Error ? error.message : String(error),
                attempts: 0,
              };
            })
            .then((outcome) => record(item, alias, outcome))
            .finally(() => window.leave());
        }
        if (batcher.shouldFlush(options.batchSize)) {
          await batcher.commitGathering();
          await recordSharedCounts();
        }
      }
    }
    await window.drained();
    await batcher.flush();
  } finally {
    stopLoadRetryLog();
    clearInterval(ticker);
    stopping.removeEventListener('abort', stopListener);
    options.progress?.update(progress());
    options.progress?.stop();
    await limiter.stop();
    await client.close();
    if (shared) {
      // Redis may be gone: what stays reserved there only overcounts, which is safe.
      await ledger
        .settle()
        .catch((error: unknown) =>
          log.warn(
            { error: error instanceof Error ? error.message : String(error) },
            'reservations not given back to Redis',
          ),
        );
      await recordSharedCounts();
      await cluster?.connection.disconnect(false);
    } else {
      await ledger.settle();
    }
  }

  const finishedAt = now();
  const runCounters = await committedCounters(warehouse, runId);
  const { exitCode, exitState } = decideExit(runCounters, stopping.aborted);
  const summary: TrackRunSummary = {
    runId,
    job: options.job,
    resumed: resumedRunId !== undefined,
    carrierDay: ledger.carrierDay,
    startedAt: formatCarrierDateTime(startedAt),
    finishedAt: formatCarrierDateTime(finishedAt),
    durationMs: Math.round(performance.now() - startedClock),
    codes: { read: inputs.read, rejected: inputs.rejected, duplicate: inputs.duplicate, toLookUp: total },
    counters: runCounters,
    lookupsSpent: ledger.spentThisRun(),
    quota: quotaStates(),
    rejectsFile: rejects.count > 0 ? rejects.path : null,
    failedOrders: await failedLookups(warehouse, runId, 100),
    exitCode,
    exitState,
  };
  await finishRun(warehouse, runId, {
    finishedAt: epochMsToInstant(finishedAt),
    counts: {
      codesRead: inputs.read,
      codesRejected: inputs.rejected,
      codesDuplicate: inputs.duplicate,
      codesToLookUp: total,
      lookedUpOk: runCounters.ok,
      carrierErrors: runCounters.carrierErrors,
      transportErrors: runCounters.transportErrors,
      deferred: runCounters.deferred,
      lookupsSpent: summary.lookupsSpent,
    },
    exitCode,
    exitState,
    summary,
  });
  // The run's scratch files, a cut-off run's of the same id included: what they held is committed or looked up again.
  await rm(spoolDir, { recursive: true, force: true });
  log.info({ summary }, 'run finished');
  return summary;
}
