import { randomUUID } from 'node:crypto';
import type { PriceAnswer, PriceQuoteRequest } from '../carriers/carrier-price-quotes.js';
import { epochMsToInstant } from '../carriers/carrier-time.js';
import { loadPriceQuotes, type PriceQuoteRow, QUOTE_CARRIER_ERROR } from '../warehouse/price-quote-loader.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import {
  CustomerOperationRun,
  type CustomerRunOptions,
  KEY_NOT_FOUND,
  KEY_REFUSED,
  type OperationRunIdentity,
  operationExitState,
} from './customer-operation-run.js';
import { offeredOperation } from './offered-operations.js';
import type { PriceInputSource } from './price-inputs.js';
import { exitStateOfError, type RunExitState } from './run-lifecycle.js';

export interface PriceRunOptions extends CustomerRunOptions {
  readonly source: PriceInputSource;
  readonly warehouse: Warehouse;
}

export interface PriceRunSummary extends OperationRunIdentity {
  readonly rowsRead: number;
  readonly rejected: number;
  /** Quotes the carrier gave. */
  readonly quoted: number;
  /** Quotes the carrier refused: stored with ok = false. */
  readonly carrierErrors: number;
  /** Requests that failed after every retry (malformed answers included): stored with ok = false and the failure's code. */
  readonly failed: number;
  readonly requestsSent: number;
  readonly rejectsFile: string | null;
  /** The first 100 rejected rows and failed requests, with their reason. */
  readonly problems: readonly {
    readonly origin: string;
    readonly orderCode: string | null;
    readonly code: string;
    readonly reason: string;
  }[];
  readonly exitCode: number;
  readonly exitState: RunExitState;
}

const LISTED_PROBLEMS = 100;

/**
 * One price run: read the requests (refusing invalid rows with their reason, never sending them), ask
 * the carrier's price calculation for each within the pace, retrying transient failures, and keep
 * every quote asked in price_quotes / price_quote_lines, committed in batches. A refused or failed
 * quote is a row with ok = false and its message. A carrier that offers no price calculation fails it
 * before anything is read or sent (OperationNotOfferedError).
 */
export async function runPriceQuotes(options: PriceRunOptions): Promise<PriceRunSummary> {
  const { warehouse, keys, now, carrier } = options;
  const priceQuotes = offeredOperation(carrier, 'price');
  const counts = { read: 0, rejected: 0, quoted: 0, carrierErrors: 0, failed: 0, sent: 0, done: 0 };
  const run = await CustomerOperationRun.start(options, warehouse, options.source.description, () => ({
    operation: 'price',
    done: counts.done,
    total: counts.read - counts.rejected,
    ok: counts.quoted,
    carrierErrors: counts.carrierErrors,
    failed: counts.failed,
    rejected: counts.rejected,
  }));
  const { runId, log } = run;

  const problems: PriceRunSummary['problems'][number][] = [];
  const noteProblem = (problem: PriceRunSummary['problems'][number]) => {
    if (problems.length < LISTED_PROBLEMS) problems.push(problem);
  };
  let batch: PriceQuoteRow[] = [];
  const flush = async () => {
    const rows = batch;
    batch = [];
    await loadPriceQuotes(warehouse, rows, run.spoolDir, carrier);
  };

  const quote = async (request: PriceQuoteRequest, orderCode: string | null, alias: string, origin: string) => {
    const asked = await run.ask<PriceAnswer>(
      alias,
      () => {
        counts.sent++;
        return priceQuotes.quote(run.account(alias), request, run.call);
      },
      (failure, attempt) =>
        log.debug({ orderCode, account: alias, failure: failure.code, attempt }, 'price request retried'),
    );
    const base = {
      quoteId: randomUUID(),
      runId,
      orderCode,
      accountAlias: alias,
      request,
      quotedAt: epochMsToInstant(now()),
    };
    counts.done++;
    if (asked === KEY_REFUSED) {
      counts.failed++;
      const reason = "not asked: the carrier refused this account's API key earlier in the run";
      noteProblem({ origin, orderCode, code: KEY_NOT_FOUND, reason });
      batch.push({ ...base, result: null, errorCode: KEY_NOT_FOUND, errorMessage: reason });
    } else if (asked.ok && asked.value.kind === 'quote') {
      counts.quoted++;
      batch.push({ ...base, result: asked.value.quote, errorCode: null, errorMessage: null });
    } else if (asked.ok && asked.value.kind === 'carrier_error') {
      counts.carrierErrors++;
      batch.push({ ...base, result: null, errorCode: QUOTE_CARRIER_ERROR, errorMessage: asked.value.message });
    } else if (!asked.ok) {
      counts.failed++;
      noteProblem({ origin, orderCode, code: asked.failure.code, reason: asked.failure.message });
      log.warn(
        { orderCode, account: alias, errorCode: asked.failure.code, attempts: asked.attempts },
        'price request failed for good',
      );
      batch.push({ ...base, result: null, errorCode: asked.failure.code, errorMessage: asked.failure.message });
    }
  };

  run.showProgress();
  let sourceError: unknown;
  try {
    for await (const item of options.source.items()) {
      if (run.stopping.aborted) break;
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
        const code =
          item.kind === 'rejected' ? 'INVALID_ROW' : item.account === null ? 'ACCOUNT_REQUIRED' : 'UNKNOWN_ACCOUNT';
        await run.rejects.add({ origin: item.origin, orderCode: item.orderCode, rejectCode: code, reason });
        noteProblem({ origin: item.origin, orderCode: item.orderCode, code, reason });
        continue;
      }
      await run.dispatch(item.orderCode, () => quote(item.request, item.orderCode, alias, item.origin));
      if (batch.length >= options.batchSize) await flush();
    }
  } catch (error) {
    sourceError = error;
  } finally {
    await run.close(flush);
  }

  const finishedAt = now();
  const exitState =
    sourceError === undefined
      ? operationExitState(counts.failed, run.keysRefused, run.stopping.aborted)
      : exitStateOfError(sourceError);
  const summary: PriceRunSummary = {
    runId,
    job: options.job,
    source: options.source.description,
    ...run.timing(finishedAt),
    rowsRead: counts.read,
    rejected: counts.rejected,
    quoted: counts.quoted,
    carrierErrors: counts.carrierErrors,
    failed: counts.failed,
    requestsSent: counts.sent,
    rejectsFile: run.rejects.count > 0 ? run.rejects.path : null,
    problems,
    exitCode: run.exitCodeOf(exitState),
    exitState,
  };
  await run.finish(
    finishedAt,
    {
      read: counts.read,
      rejected: counts.rejected,
      ok: counts.quoted,
      carrierErrors: counts.carrierErrors,
      failed: counts.failed,
      // A quote not asked is a row of its own (KEY_NOT_FOUND), counted as failed: nothing waits for a next run.
      deferred: 0,
      sent: counts.sent,
    },
    exitState,
    sourceError === undefined
      ? summary
      : { ...summary, error: sourceError instanceof Error ? sourceError.message : String(sourceError) },
  );
  log.info({ summary }, 'price run finished');
  if (sourceError !== undefined) throw sourceError;
  return summary;
}
