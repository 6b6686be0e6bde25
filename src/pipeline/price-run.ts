import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { carrierDayOf, epochMsToInstant, formatCarrierDateTime, type PriceRequest } from '../carrier/contract.js';
import { CustomerOperationsClient, type PriceAnswer } from '../carrier/client/customer-operations-client.js';
import { SourceError } from '../sources/order-code-source.js';
import { loadPriceQuotes, QUOTE_CARRIER_ERROR, type PriceQuoteRow } from '../warehouse/price-quote-loader.js';
import { finishRun, startRun } from '../warehouse/run-store.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { askWithRetry, operationExit, operationLimiter, type CustomerRunOptions, type OperationProgress } from './customer-operation-run.js';
import { DispatchWindow } from './dispatch-window.js';
import type { PriceInputSource } from './price-inputs.js';
import { RejectsFile } from './rejects-file.js';
import { newRunId } from './track-run.js';

export interface PriceRunOptions extends CustomerRunOptions {
  readonly source: PriceInputSource;
  readonly warehouse: Warehouse;
}

export interface PriceRunSummary {
  readonly runId: string;
  readonly job: string;
  readonly source: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly rowsRead: number;
  readonly rejected: number;
  /** Quotes the carrier gave. */
  readonly quoted: number;
  /** Quotes the carrier refused (IsError or Errors): stored with ok = false. */
  readonly carrierErrors: number;
  /** Requests that failed after every retry (malformed answers included): stored with ok = false and the failure's code. */
  readonly failed: number;
  readonly requestsSent: number;
  readonly rejectsFile: string | null;
  /** The first 100 rejected rows and failed requests, with their reason. */
  readonly problems: readonly { readonly origin: string; readonly orderCode: string | null; readonly code: string; readonly reason: string }[];
  readonly exitCode: number;
  readonly exitState: string;
}

const PROGRESS_INTERVAL_MS = 500;
const LISTED_PROBLEMS = 100;

/**
 * One price run: read the requests (refusing invalid rows with their reason, never sending them), ask
 * the carrier for each within the pace, retrying transient failures, and keep every quote asked in
 * price_quotes / price_quote_lines, committed in batches. A refused or failed quote is a row with
 * ok = false and its message.
 */
export async function runPriceQuotes(options: PriceRunOptions): Promise<PriceRunSummary> {
  const { warehouse, keys, logger, now } = options;
  const startedAt = now();
  const startedClock = performance.now();
  const runId = newRunId(options.job, startedAt);
  const spoolDir = join(options.dataDir, 'spool', runId);
  const rejects = new RejectsFile(join(options.dataDir, 'rejects', `${runId}.csv`));
  const log = logger.child({ runId });
  await startRun(warehouse, { runId, job: options.job, source: options.source.description, startedAt: epochMsToInstant(startedAt), carrierDay: carrierDayOf(startedAt) });
  log.info({ job: options.job, source: options.source.description, keys: keys.aliases, pace: options.pace }, 'price run started');

  const counts = { read: 0, rejected: 0, quoted: 0, carrierErrors: 0, failed: 0, sent: 0, done: 0 };
  const problems: PriceRunSummary['problems'][number][] = [];
  const noteProblem = (problem: PriceRunSummary['problems'][number]) => {
    if (problems.length < LISTED_PROBLEMS) problems.push(problem);
  };
  const client = new CustomerOperationsClient(options.client);
  const limiter = operationLimiter(options.pace);
  const stopping = options.stop ?? new AbortController().signal;
  const window = new DispatchWindow(options.pace.concurrency * 2);
  let batch: PriceQuoteRow[] = [];
  const flush = async () => {
    const rows = batch;
    batch = [];
    await loadPriceQuotes(warehouse, rows, spoolDir);
  };
  const progress = (): OperationProgress => ({
    operation: 'price',
    done: counts.done,
    total: counts.read - counts.rejected,
    ok: counts.quoted,
    carrierErrors: counts.carrierErrors,
    failed: counts.failed,
    rejected: counts.rejected,
  });

  const quote = async (request: PriceRequest, orderCode: string | null, alias: string, origin: string) => {
    const asked = await askWithRetry<PriceAnswer>(
      limiter,
      () => {
        counts.sent++;
        return client.quotePrice(keys.keyOf(alias), request);
      },
      options.retry,
      stopping,
      (failure, attempt) => log.debug({ orderCode, account: alias, failure: failure.code, attempt }, 'price request retried'),
    );
    const base = { quoteId: randomUUID(), runId, orderCode, accountAlias: alias, request, quotedAt: epochMsToInstant(now()) };
    counts.done++;
    if (asked.ok && asked.value.kind === 'quote') {
      counts.quoted++;
      batch.push({ ...base, result: asked.value.quote, errorCode: null, errorMessage: null });
    } else if (asked.ok && asked.value.kind === 'carrier_error') {
      counts.carrierErrors++;
      batch.push({ ...base, result: null, errorCode: QUOTE_CARRIER_ERROR, errorMessage: asked.value.message });
    } else if (!asked.ok) {
      counts.failed++;
      noteProblem({ origin, orderCode, code: asked.failure.code, reason: asked.failure.message });
      log.warn({ orderCode, account: alias, errorCode: asked.failure.code, attempts: asked.attempts }, 'price request failed for good');
      batch.push({ ...base, result: null, errorCode: asked.failure.code, errorMessage: asked.failure.message });
    }
  };

  options.progress?.start(progress());
  const ticker = setInterval(() => options.progress?.update(progress()), PROGRESS_INTERVAL_MS);
  let sourceError: unknown;
  try {
    for await (const item of options.source.items()) {
      if (stopping.aborted) break;
      counts.read++;
      const alias = item.kind === 'request' ? keys.aliasFor(item.account) : undefined;
      if (item.kind === 'rejected' || alias === undefined) {
        counts.rejected++;
        const reason =
          item.kind === 'rejected'
            ? item.reason
            : item.account === null
              ? `no account column and several keys, none called default: say which key (${keys.aliases.join(', ')}) in an account column`
              : `no API key for account ${item.account}`;
        const code = item.kind === 'rejected' ? 'INVALID_ROW' : item.account === null ? 'ACCOUNT_REQUIRED' : 'UNKNOWN_ACCOUNT';
        await rejects.add({ origin: item.origin, orderCode: item.orderCode, rejectCode: code, reason });
        noteProblem({ origin: item.origin, orderCode: item.orderCode, code, reason });
        continue;
      }
      await window.enter();
      void quote(item.request, item.orderCode, alias, item.origin)
        .catch((error: unknown) => log.error({ orderCode: item.orderCode, error: error instanceof Error ? error.message : String(error) }, 'price request broke'))
        .finally(() => window.leave());
      if (batch.length >= options.batchSize) await flush();
    }
  } catch (error) {
    sourceError = error;
  } finally {
    await window.drained();
    await flush();
    clearInterval(ticker);
    options.progress?.update(progress());
    options.progress?.stop();
    await limiter.stop({ dropWaitingJobs: false });
    await client.close();
    await rejects.close();
  }

  const finishedAt = now();
  const badInput = sourceError instanceof SourceError;
  const { exitCode, exitState } = sourceError !== undefined ? { exitCode: badInput ? 2 : 1, exitState: badInput ? 'bad_input' : 'failed' } : operationExit(counts.failed, stopping.aborted);
  const summary: PriceRunSummary = {
    runId,
    job: options.job,
    source: options.source.description,
    startedAt: formatCarrierDateTime(startedAt),
    finishedAt: formatCarrierDateTime(finishedAt),
    durationMs: Math.round(performance.now() - startedClock),
    rowsRead: counts.read,
    rejected: counts.rejected,
    quoted: counts.quoted,
    carrierErrors: counts.carrierErrors,
    failed: counts.failed,
    requestsSent: counts.sent,
    rejectsFile: rejects.count > 0 ? rejects.path : null,
    problems,
    exitCode,
    exitState,
  };
  await finishRun(warehouse, runId, {
    finishedAt: epochMsToInstant(finishedAt),
    counts: {
      codesRead: counts.read,
      codesRejected: counts.rejected,
      codesDuplicate: 0,
      codesToLookUp: counts.read - counts.rejected,
      lookedUpOk: counts.quoted,
      carrierErrors: counts.carrierErrors,
      transportErrors: counts.failed,
      deferred: 0,
      lookupsSpent: counts.sent,
    },
    exitCode,
    exitState,
    summary: sourceError === undefined ? summary : { ...summary, error: sourceError instanceof Error ? sourceError.message : String(sourceError) },
  });
  log.info({ summary }, 'price run finished');
  if (sourceError !== undefined) throw sourceError;
  return summary;
}
