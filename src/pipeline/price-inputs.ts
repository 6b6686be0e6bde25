import type { PriceQuoteRequest } from '../carriers/carrier-price-quotes.js';
import type { CsvDelimiter } from '../sources/csv-header-line.js';
import type { CsvRowItem } from '../sources/csv-rows.js';
import {
  checkPriceRow,
  fieldsOf,
  findPriceColumns,
  PRICE_REQUEST_FIELDS,
  type PriceColumns,
  type PriceRowField,
} from '../sources/price-request-rows.js';
import type { QueryRow } from '../sources/source-rows.js';
import { describeTable, type TableSource, tableFile, tableName, tableRows } from '../sources/table-rows.js';
import type { Warehouse } from '../warehouse/warehouse.js';

/** A quote to ask, or a row refused before anything was sent. */
export type PriceInput =
  | {
      readonly kind: 'request';
      readonly request: PriceQuoteRequest;
      readonly orderCode: string | null;
      readonly account: string | null;
      readonly origin: string;
    }
  | { readonly kind: 'rejected'; readonly origin: string; readonly orderCode: string | null; readonly reason: string };

/** Where a price run's requests come from: read once, streaming, in source order. */
export interface PriceInputSource {
  /** For logs and the `runs` table; never a password. */
  readonly description: string;
  items(): AsyncIterable<PriceInput>;
}

export interface PriceInputOptions {
  /** Fills the hub (ClientHubID) where a row has none (the column may then be absent). */
  readonly defaultClientHubId?: string | undefined;
  /** A CSV file's delimiter (default: from its header line). */
  readonly delimiter?: CsvDelimiter | undefined;
  /** A workbook's sheet (default: its first). */
  readonly sheet?: string | undefined;
}

function requiredRequestFields(options: PriceInputOptions): PriceRowField[] {
  return PRICE_REQUEST_FIELDS.filter((field) => field !== 'clientHubId' || options.defaultClientHubId === undefined);
}

/** Turns named rows into checked requests; `columns` are the fields' places, known before the first row. */
async function* requestsFromRows(
  rows: AsyncIterable<CsvRowItem>,
  columns: () => PriceColumns,
  options: PriceInputOptions,
): AsyncGenerator<PriceInput> {
  for await (const item of rows) {
    if (item.kind === 'rejected') {
      yield { kind: 'rejected', origin: item.rejection.origin, orderCode: null, reason: item.rejection.reason };
      continue;
    }
    const fields = fieldsOf(columns(), item.row.values);
    const checked = checkPriceRow(fields, options.defaultClientHubId);
    if (checked.ok)
      yield {
        kind: 'request',
        request: checked.request,
        orderCode: checked.orderCode,
        account: checked.account,
        origin: item.row.origin,
      };
    else
      yield {
        kind: 'rejected',
        origin: item.row.origin,
        orderCode: fields.order_code === undefined ? null : String(fields.order_code).trim() || null,
        reason: checked.reason,
      };
  }
}

/** Quote requests from a CSV file with the request's columns (PascalCase or snake_case) and optionally order_code and account. */
export function csvPriceRequests(path: string, options: PriceInputOptions = {}): PriceInputSource {
  return tablePriceRequests({ kind: 'csv', file: path, delimiter: options.delimiter }, options);
}

/** Quote requests from any source of rows: a CSV or workbook, a query on DuckDB, PostgreSQL or MySQL. */
export function tablePriceRequests(source: TableSource, options: PriceInputOptions = {}): PriceInputSource {
  const required = requiredRequestFields(options);
  let columns: PriceColumns = {};
  return {
    description: describeTable(source),
    items: () =>
      requestsFromRows(
        tableRows(source, (names) => (columns = findPriceColumns(names, required, tableName(source)))),
        () => columns,
        options,
      ),
  };
}

/** What the warehouse knows of a tracked order's parcel. */
interface StoredParcel {
  readonly length: number | null;
  readonly width: number | null;
  readonly height: number | null;
  readonly realWeight: number | null;
  readonly serviceTypeId: string | null;
  readonly accountAlias: string;
}

const ORDERS_PER_QUERY = 1_000;

async function storedParcels(
  warehouse: Warehouse,
  carrier: string,
  codes: readonly string[],
): Promise<Map<string, StoredParcel>> {
  const reader = await warehouse.readAll(
    `SELECT order_code, length, width, height, real_weight, service_type_id, account_alias
     FROM orders WHERE carrier = $carrier AND order_code IN (SELECT unnest(string_split($codes, chr(10))))`,
    { carrier, codes: codes.join('\n') },
  );
  return new Map(
    reader.getRowObjectsJS().map((row) => [
      row.order_code as string,
      {
        length: row.length as number | null,
        width: row.width as number | null,
        height: row.height as number | null,
        realWeight: row.real_weight as number | null,
        serviceTypeId: row.service_type_id as string | null,
        accountAlias: row.account_alias as string,
      },
    ]),
  );
}

/**
 * Quote requests for `carrier`'s tracked orders: the destination CSV gives order_code and
 * ToProvinceName, ToDistrictName, ToWardName (and optionally ClientHubID, account); the warehouse's
 * orders row gives the dimensions, real weight, service type and account. An order not in the
 * warehouse is refused.
 */
export function orderPriceRequests(
  warehouse: Warehouse,
  carrier: string,
  destinations: string,
  options: PriceInputOptions = {},
): PriceInputSource {
  const required: PriceRowField[] = ['order_code', 'toProvinceName', 'toDistrictName', 'toWardName'];
  return {
    description: `orders:${destinations}`,
    items: () => requestsForOrders(warehouse, carrier, destinations, required, options),
  };
}

async function* requestsForOrders(
  warehouse: Warehouse,
  carrier: string,
  destinations: string,
  required: readonly PriceRowField[],
  options: PriceInputOptions,
): AsyncGenerator<PriceInput> {
  let columns: PriceColumns | undefined;
  let pending: QueryRow[] = [];
  const flush = async function* (): AsyncGenerator<PriceInput> {
    const rows = pending;
    pending = [];
    const parcels = await storedParcels(
      warehouse,
      carrier,
      rows.map((row) => String(row.values[columns!.order_code!]).trim()),
    );
    for (const row of rows) {
      const fields = fieldsOf(columns!, row.values);
      const orderCode = String(fields.order_code ?? '').trim();
      const parcel = parcels.get(orderCode);
      if (parcel === undefined) {
        yield {
          kind: 'rejected',
          origin: row.origin,
          orderCode: orderCode || null,
          reason: `order ${orderCode || '(empty)'} is not in the warehouse: track it first`,
        };
        continue;
      }
      const checked = checkPriceRow(
        {
          ...fields,
          length: parcel.length,
          width: parcel.width,
          height: parcel.height,
          realWeight: parcel.realWeight,
          serviceTypeId: parcel.serviceTypeId,
          account: String(fields.account ?? '').trim() || parcel.accountAlias,
        },
        options.defaultClientHubId,
      );
      if (checked.ok)
        yield { kind: 'request', request: checked.request, orderCode, account: checked.account, origin: row.origin };
      else yield { kind: 'rejected', origin: row.origin, orderCode, reason: checked.reason };
    }
  };
  const rows = tableRows(
    tableFile(destinations, options),
    (names) => (columns = findPriceColumns(names, required, destinations)),
  );
  for await (const item of rows) {
    if (item.kind === 'rejected') {
      yield { kind: 'rejected', origin: item.rejection.origin, orderCode: null, reason: item.rejection.reason };
      continue;
    }
    pending.push(item.row);
    if (pending.length >= ORDERS_PER_QUERY) yield* flush();
  }
  if (pending.length > 0) yield* flush();
}
