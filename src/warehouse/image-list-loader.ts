import type { JsonFields } from '../carriers/answer-sql.js';
import type { CarrierInstant } from '../carriers/carrier-time.js';
import { type SpoolFile, spoolFileRows, withNdjsonSpool } from './ndjson-spool.js';
import { recordChangedRows } from './partition-change-ledger.js';
import { type LookupResultRow, loadResults, resultSpoolLine } from './snapshot-loader.js';
import { sqlText } from './sql-literals.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

/** One image of a fetched list, and what became of its download when one was asked for. */
export interface StoredImage {
  readonly no: number;
  readonly imageUrl: string;
  readonly downloadedPath: string | null;
  /** `CODE: message` when the download was refused or failed. */
  readonly downloadError: string | null;
}

/** An order's image list as fetched: no images is a list too (known to have none). */
export interface ImageListRow {
  readonly orderCode: string;
  readonly accountAlias: string;
  readonly runId: string;
  readonly fetchedAt: CarrierInstant;
  readonly images: readonly StoredImage[];
}

/** What one checkpoint of an images run commits: the lists fetched and every order's outcome. */
export interface ImageListBatch {
  readonly lists: readonly ImageListRow[];
  /** One lookup_results row per order asked: ok, carrier_error (e.g. ORDERCODE_NOT_FOUND) or transport_error. */
  readonly results: readonly LookupResultRow[];
}

function listSpoolLine(list: ImageListRow): string {
  return JSON.stringify({
    orderCode: list.orderCode,
    accountAlias: list.accountAlias,
    runId: list.runId,
    fetchedAt: list.fetchedAt,
    images: list.images.map((image) => ({
      no: image.no,
      imageUrl: image.imageUrl,
      downloadedPath: image.downloadedPath,
      downloadError: image.downloadError,
    })),
  });
}

const LIST_FIELDS: JsonFields = {
  orderCode: 'VARCHAR',
  accountAlias: 'VARCHAR',
  runId: 'VARCHAR',
  fetchedAt: 'TIMESTAMPTZ',
  images: [{ no: 'INTEGER', imageUrl: 'VARCHAR', downloadedPath: 'VARCHAR', downloadError: 'VARCHAR' }],
};

/**
 * Loads image lists in one transaction with the run's lookup_results rows, through NDJSON spool files:
 * each list replaces the order's order_image_lists row (image_count, possibly 0) and its order_images
 * rows. Only answers that passed the contract get here: a failed or malformed answer is a
 * lookup_results row and leaves the order's stored list as it was. The orders are `carrier`'s.
 */
export async function loadImageLists(
  warehouse: Warehouse,
  batch: ImageListBatch,
  spoolDir: string,
  carrier: string,
): Promise<void> {
  if (batch.lists.length === 0 && batch.results.length === 0) return;
  const lists = [...new Map(batch.lists.map((list) => [list.orderCode, list])).values()];
  await withNdjsonSpool(spoolDir, 'image-lists', async (spool) => {
    const listsFile = lists.length === 0 ? undefined : await spool.write(lists.map(listSpoolLine));
    const resultsFile = batch.results.length === 0 ? undefined : await spool.write(batch.results.map(resultSpoolLine));
    await warehouse.loadTransaction(
      async (sql) => {
        if (listsFile !== undefined) await replaceLists(sql, listsFile, carrier);
        if (resultsFile !== undefined) await loadResults(sql, resultsFile, carrier);
      },
      `a batch of ${batch.results.length} image lookups`,
      ['batchSize'],
    );
  });
}

async function replaceLists(sql: SqlRunner, file: SpoolFile, carrier: string): Promise<void> {
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE staged_image_lists AS
     SELECT ${sqlText(carrier)} AS carrier, * FROM ${spoolFileRows('$file', file, LIST_FIELDS)}`,
    { file: file.path },
  );
  await sql.run(
    `DELETE FROM order_images
     WHERE (carrier, order_code) IN (SELECT (carrier, orderCode) FROM staged_image_lists)`,
  );
  await sql.run(
    `INSERT OR REPLACE INTO order_image_lists BY NAME
     SELECT carrier, orderCode AS order_code, accountAlias AS account_alias, len(images) AS image_count, fetchedAt AS fetched_at, runId AS run_id
     FROM staged_image_lists`,
  );
  await sql.run(
    `INSERT INTO order_images BY NAME
     SELECT carrier, orderCode AS order_code, image.no AS no, image.imageUrl AS image_url, fetchedAt AS fetched_at,
            image.downloadedPath AS downloaded_path, image.downloadError AS download_error
     FROM (SELECT carrier, orderCode, fetchedAt, unnest(images) AS image FROM staged_image_lists)`,
  );
  // A list and its images are placed by their order's month.
  for (const table of ['order_image_lists', 'order_images'])
    await recordChangedRows(sql, table, 'SELECT carrier, orderCode AS order_code FROM staged_image_lists');
  await sql.run('DROP TABLE staged_image_lists');
}
