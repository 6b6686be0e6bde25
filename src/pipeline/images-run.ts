import { neutralStatusIn } from '../carriers/carrier-definition-sql.js';
import type { OrderImage, OrderImagesAnswer } from '../carriers/carrier-order-images.js';
import { type CarrierInstant, epochMsToInstant } from '../carriers/carrier-time.js';
import {
  downloadImage,
  type ImageDownloadPolicy,
  ImageDownloadRefused,
  isNotWritten,
} from '../carriers/client/image-download.js';
import type { OrderCodeSource } from '../sources/order-code-source.js';
import { type ImageListRow, loadImageLists, type StoredImage } from '../warehouse/image-list-loader.js';
import { sameOrder } from '../warehouse/order-keys.js';
import type { FailedOrder } from '../warehouse/run-store.js';
import type { LookupResultRow } from '../warehouse/snapshot-loader.js';
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
import type { RunExitState } from './run-lifecycle.js';

export interface ImagesRunOptions extends CustomerRunOptions {
  readonly warehouse: Warehouse;
  /** The orders to ask for; without sources, the carrier's delivered orders with no image list stored. */
  readonly sources: readonly OrderCodeSource[];
  /** When given, the images are downloaded under this policy. */
  readonly download?: ImageDownloadPolicy | undefined;
}

export interface ImagesRunSummary extends OperationRunIdentity {
  readonly ordersToAsk: number;
  readonly rejected: number;
  /** Image lists stored, and of them the empty ones (known to have no images). */
  readonly listsStored: number;
  readonly emptyLists: number;
  readonly images: number;
  /** Orders the carrier refused (ORDERCODE_NOT_FOUND...), by code. */
  readonly carrierErrors: number;
  readonly carrierErrorsByCode: Record<string, number>;
  /** Orders whose list could not be had after every retry (malformed answers included). */
  readonly failed: number;
  /** Orders not asked because the carrier refused their account's key earlier in the run. */
  readonly deferred: number;
  readonly requestsSent: number;
  readonly downloads: {
    readonly saved: number;
    readonly refused: number;
    readonly refusedByCode: Record<string, number>;
    /** Images the folder or the disk did not take; any fails the run. */
    readonly notWritten: number;
    /** Why the first of them was not written: the path and the system's cause. */
    readonly notWrittenCause: string | null;
  } | null;
  readonly rejectsFile: string | null;
  /** Orders whose request failed for good, the first few. */
  readonly failedOrders: readonly FailedOrder[];
  readonly exitCode: number;
  readonly exitState: RunExitState;
}

interface ImagesTarget {
  readonly orderCode: string;
  readonly account: string | null;
  readonly origin: string;
}

const LISTED_FAILURES = 100;

/** The carrier's delivered orders whose image list was never fetched, with their account. */
async function deliveredWithoutImages(warehouse: Warehouse, carrier: string): Promise<ImagesTarget[]> {
  const reader = await warehouse.readAll(
    `SELECT o.order_code, o.account_alias FROM orders AS o
     WHERE o.carrier = $carrier AND ${neutralStatusIn(['delivered'], 'o.status', 'o.carrier')}
       AND NOT EXISTS (SELECT 1 FROM order_image_lists AS l WHERE ${sameOrder('l', 'o')})
     ORDER BY o.order_code`,
    { carrier },
  );
  return reader.getRowObjectsJS().map((row) => ({
    orderCode: row.order_code as string,
    account: row.account_alias as string | null,
    origin: 'warehouse',
  }));
}

/** The stored account of the carrier's orders the warehouse knows, for codes given without one. */
async function storedAccounts(
  warehouse: Warehouse,
  carrier: string,
  codes: readonly string[],
): Promise<Map<string, string>> {
  if (codes.length === 0) return new Map();
  const reader = await warehouse.readAll(
    `SELECT order_code, account_alias FROM orders
     WHERE carrier = $carrier AND order_code IN (SELECT unnest(string_split($codes, chr(10))))`,
    { carrier, codes: codes.join('\n') },
  );
  return new Map(reader.getRowObjectsJS().map((row) => [row.order_code as string, row.account_alias as string]));
}

/**
 * One images run: for each order, fetch its image list from the carrier within the pace (retrying
 * transient failures), optionally download the files under the download policy, and store the list in
 * order_image_lists / order_images (an empty list too) with a lookup_results row per order. A refused
 * or malformed answer is a lookup_results row only: nothing of it is loaded. A carrier that offers no
 * order images fails it before anything is read or sent (OperationNotOfferedError).
 */
export async function runOrderImages(options: ImagesRunOptions): Promise<ImagesRunSummary> {
  const { warehouse, keys, now, carrier } = options;
  const orderImages = offeredOperation(carrier, 'images');
  const counts = {
    done: 0,
    lists: 0,
    empty: 0,
    images: 0,
    carrierErrors: 0,
    failed: 0,
    deferred: 0,
    sent: 0,
    saved: 0,
    refused: 0,
    notWritten: 0,
  };
  let notWrittenCause: string | null = null;
  let targets: ImagesTarget[] = [];
  let rejected = 0;
  /** Source rows that are not in the work list at all. */
  let unreadable = 0;
  const sourceDescription =
    options.sources.length === 0
      ? 'warehouse: delivered orders without an image list'
      : options.sources.map((s) => s.description).join(' + ');
  const run = await CustomerOperationRun.start(options, warehouse, sourceDescription, () => ({
    operation: 'images',
    done: counts.done,
    total: targets.length,
    ok: counts.lists,
    carrierErrors: counts.carrierErrors,
    failed: counts.failed,
    rejected,
  }));
  const { runId, log, rejects } = run;

  // The work list: given codes (de-duplicated, their account from the row, else the warehouse), or the warehouse's delivered orders.
  if (options.sources.length === 0) {
    targets = await deliveredWithoutImages(warehouse, carrier);
  } else {
    const seen = new Map<string, ImagesTarget>();
    for (const source of options.sources) {
      for await (const item of source.items()) {
        if (item.kind === 'rejected') {
          rejected++;
          unreadable++;
          await rejects.add({
            origin: item.rejection.origin,
            orderCode: null,
            rejectCode: 'UNREADABLE_ROW',
            reason: item.rejection.reason,
          });
        } else if (!seen.has(item.code.orderCode)) {
          seen.set(item.code.orderCode, item.code);
        }
      }
    }
    const accounts = await storedAccounts(
      warehouse,
      carrier,
      [...seen.values()].filter((t) => t.account === null).map((t) => t.orderCode),
    );
    targets = [...seen.values()].map((t) => ({ ...t, account: t.account ?? accounts.get(t.orderCode) ?? null }));
  }

  const carrierErrorsByCode: Record<string, number> = {};
  const refusedByCode: Record<string, number> = {};
  const failedOrders: FailedOrder[] = [];
  let lists: ImageListRow[] = [];
  let results: LookupResultRow[] = [];
  const flush = async () => {
    const batch = { lists, results };
    lists = [];
    results = [];
    await loadImageLists(warehouse, batch, run.spoolDir, carrier);
  };

  const storedImages = async (items: readonly OrderImage[], orderCode: string): Promise<StoredImage[]> => {
    // One row per number: a repeated number keeps its first link.
    const byNo = new Map<number, OrderImage>();
    for (const item of items) if (!byNo.has(item.no)) byNo.set(item.no, item);
    const stored: StoredImage[] = [];
    for (const item of byNo.values()) {
      if (options.download === undefined) {
        stored.push({ no: item.no, imageUrl: item.imageUrl, downloadedPath: null, downloadError: null });
        continue;
      }
      try {
        const path = await downloadImage(options.download, orderCode, item.no, item.imageUrl);
        counts.saved++;
        stored.push({ no: item.no, imageUrl: item.imageUrl, downloadedPath: path, downloadError: null });
      } catch (error) {
        if (!(error instanceof ImageDownloadRefused)) throw error;
        if (isNotWritten(error)) {
          counts.notWritten++;
          notWrittenCause ??= error.message;
          log.error({ orderCode, no: item.no, error: error.message }, 'image not written');
        } else {
          counts.refused++;
          refusedByCode[error.code] = (refusedByCode[error.code] ?? 0) + 1;
          log.warn({ orderCode, no: item.no, refused: error.code }, 'image not downloaded');
        }
        stored.push({ no: item.no, imageUrl: item.imageUrl, downloadedPath: null, downloadError: error.record });
      }
    }
    return stored;
  };

  const fetchList = async (target: ImagesTarget, alias: string) => {
    const asked = await run.ask<OrderImagesAnswer>(
      alias,
      () => {
        counts.sent++;
        return orderImages.list(run.account(alias), target.orderCode, run.call);
      },
      (failure, attempt) =>
        log.debug(
          { orderCode: target.orderCode, account: alias, failure: failure.code, attempt },
          'images request retried',
        ),
    );
    const finishedAt: CarrierInstant = epochMsToInstant(now());
    const result = {
      runId,
      orderCode: target.orderCode,
      accountAlias: alias,
      attempts: asked === KEY_REFUSED ? 0 : asked.attempts,
      origin: target.origin,
      finishedAt,
    };
    if (asked === KEY_REFUSED) {
      // Not asked: the next run asks again, once the key is right.
      counts.deferred++;
      results.push({
        ...result,
        outcome: 'deferred',
        errorCode: KEY_NOT_FOUND,
        errorMessage: "not asked: the carrier refused this account's API key earlier in the run",
      });
    } else if (asked.ok && asked.value.kind === 'images') {
      const images = await storedImages(asked.value.images, target.orderCode);
      counts.lists++;
      counts.images += images.length;
      if (images.length === 0) counts.empty++;
      lists.push({ orderCode: target.orderCode, accountAlias: alias, runId, fetchedAt: finishedAt, images });
      results.push({ ...result, outcome: 'ok', errorCode: null, errorMessage: null });
    } else if (asked.ok && asked.value.kind === 'carrier_error') {
      const { code, message } = asked.value;
      counts.carrierErrors++;
      carrierErrorsByCode[code] = (carrierErrorsByCode[code] ?? 0) + 1;
      results.push({ ...result, outcome: 'carrier_error', errorCode: code, errorMessage: message });
    } else if (!asked.ok) {
      counts.failed++;
      if (failedOrders.length < LISTED_FAILURES)
        failedOrders.push({
          orderCode: target.orderCode,
          errorCode: asked.failure.code,
          errorMessage: asked.failure.message,
        });
      log.warn(
        { orderCode: target.orderCode, account: alias, errorCode: asked.failure.code, attempts: asked.attempts },
        'images request failed for good',
      );
      results.push({
        ...result,
        outcome: 'transport_error',
        errorCode: asked.failure.code,
        errorMessage: asked.failure.message,
      });
    }
    counts.done++;
  };

  log.info({ orders: targets.length, rejected }, 'orders to ask');
  run.showProgress();
  try {
    for (const target of targets) {
      if (run.stopping.aborted) break;
      const alias = keys.aliasFor(target.account);
      if (alias === undefined) {
        rejected++;
        const reason =
          target.account === null
            ? 'no account for this order and several keys, none called default'
            : `no API key for account ${target.account}`;
        await rejects.add({
          origin: target.origin,
          orderCode: target.orderCode,
          rejectCode: target.account === null ? 'ACCOUNT_REQUIRED' : 'UNKNOWN_ACCOUNT',
          reason,
        });
        results.push({
          runId,
          orderCode: target.orderCode,
          accountAlias: target.account,
          outcome: 'rejected',
          errorCode: target.account === null ? 'ACCOUNT_REQUIRED' : 'UNKNOWN_ACCOUNT',
          errorMessage: reason,
          attempts: 0,
          origin: target.origin,
          finishedAt: epochMsToInstant(now()),
        });
        continue;
      }
      await run.dispatch(target.orderCode, () => fetchList(target, alias));
      if (lists.length + results.length >= options.batchSize) await flush();
    }
  } finally {
    await run.close(flush);
  }

  const finishedAt = now();
  // An image the folder or the disk did not take fails the run as a failed request does.
  const exitState = operationExitState(counts.failed + counts.notWritten, run.keysRefused, run.stopping.aborted);
  const summary: ImagesRunSummary = {
    runId,
    job: options.job,
    source: sourceDescription,
    ...run.timing(finishedAt),
    ordersToAsk: targets.length,
    rejected,
    listsStored: counts.lists,
    emptyLists: counts.empty,
    images: counts.images,
    carrierErrors: counts.carrierErrors,
    carrierErrorsByCode,
    failed: counts.failed,
    deferred: counts.deferred,
    requestsSent: counts.sent,
    downloads:
      options.download === undefined
        ? null
        : {
            saved: counts.saved,
            refused: counts.refused,
            refusedByCode,
            notWritten: counts.notWritten,
            notWrittenCause,
          },
    rejectsFile: rejects.count > 0 ? rejects.path : null,
    failedOrders,
    exitCode: run.exitCodeOf(exitState),
    exitState,
  };
  await run.finish(
    finishedAt,
    {
      read: targets.length + unreadable,
      rejected,
      ok: counts.lists,
      carrierErrors: counts.carrierErrors,
      failed: counts.failed,
      deferred: counts.deferred,
      sent: counts.sent,
    },
    exitState,
    summary,
  );
  log.info({ summary }, 'images run finished');
  return summary;
}
