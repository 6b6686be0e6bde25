/** What the report tests share: the sandbox's clock for the command line, a tracked sandbox world, price quotes for its orders. */
import { readFile } from 'node:fs/promises';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { refreshChargeAudit } from '../../src/warehouse/charge-audit-rows.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import {
  clientHubs,
  keysOf,
  mapConcurrent,
  quotePrice,
  quoteRequestFor,
  truthOrders,
} from '../sandbox/sandbox-http.js';
import type { TrackingWorkspace } from '../support/tracking-harness.js';

/** PARCEL_RECON_NOW at the sandbox's clock, so the report's "now" and default --to are the sandbox's. */
export function sandboxNow(sandbox: RunningSandbox): Record<string, string> {
  return { PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString() };
}

/** A CSV of every order code of the sandbox's world with its account. */
export async function allOrdersCsv(sandbox: RunningSandbox, workspace: TrackingWorkspace): Promise<string> {
  const rows: string[][] = [['order_code', 'account']];
  const perAccount = sandbox.state.options.ordersPerAccount;
  for (const account of sandbox.state.world.accounts)
    for (let i = 0; i < perAccount; i++) rows.push([sandbox.state.world.orderCode(account.index, i), account.alias]);
  return workspace.writeCsv('all-orders.csv', rows);
}

/**
 * Asks the sandbox for a price quote of every tracked order's own parcel (its measures from the
 * warehouse, destination and hub from the truth) and stores each in price_quotes with its order code.
 */
export async function quoteTrackedOrders(sandbox: RunningSandbox, dbPath: string): Promise<number> {
  const truth = new Map((await truthOrders(sandbox)).map((o) => [o.orderCode, o]));
  const hubs = await clientHubs(sandbox);
  const keys = keysOf(sandbox);
  const warehouse = await Warehouse.open(dbPath);
  try {
    const parcels = (
      await warehouse.readAll(
        'SELECT order_code, account_alias, length, width, height, real_weight, service_type_id FROM orders ORDER BY order_code',
      )
    ).getRowObjectsJS() as {
      order_code: string;
      account_alias: string;
      length: number;
      width: number;
      height: number;
      real_weight: number;
      service_type_id: string;
    }[];
    const quoted = await mapConcurrent(parcels, 16, async (p) => {
      const order = truth.get(p.order_code)!;
      const request = quoteRequestFor(
        order,
        {
          length: p.length,
          width: p.width,
          height: p.height,
          realWeight: p.real_weight,
          serviceTypeID: p.service_type_id,
        },
        hubs[p.account_alias]!,
      );
      return { parcel: p, request, result: await quotePrice(sandbox, keys[p.account_alias]!, request) };
    });
    for (const [index, { parcel, request, result }] of quoted.entries()) {
      await warehouse.run(
        `INSERT INTO price_quotes (carrier, quote_id, run_id, order_code, account_alias, to_province_name, to_district_name, to_ward_name, length, width, height,
           real_weight, client_hub_id, service_type_id, ok, error_message, total_service_cost, cal_weight, weight, quoted_at)
         VALUES ('247express', $1, 'test-quotes', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NOT $13, $14, CAST($15 AS DECIMAL(20,4)), $16, $17, to_timestamp($18 / 1000))`,
        [
          `Q${index}`,
          parcel.order_code,
          parcel.account_alias,
          request.ToProvinceName,
          request.ToDistrictName,
          request.ToWardName,
          request.Length,
          request.Width,
          request.Height,
          request.RealWeight,
          request.ClientHubID,
          request.ServiceTypeID,
          result.IsError,
          result.ErrorMessage,
          String(result.TotalServiceCost),
          result.CalWeight,
          result.Weight,
          sandbox.state.clock.now(),
        ],
      );
    }
    // As the price loader does for the orders it quotes.
    await refreshChargeAudit(warehouse);
    return quoted.length;
  } finally {
    await warehouse.close();
  }
}

export async function readJsonRows<T = Record<string, unknown>>(path: string): Promise<T[]> {
  return JSON.parse(await readFile(path, 'utf8')) as T[];
}

/**
 * Times in Parquet are instants, in CSV the display time zone's wall time with its offset: both as
 * epoch seconds to compare them. `parquetTimeSql` of a TIMESTAMPTZ column; `csvTimeSeconds` of a CSV
 * cell, which must be to the second with the carrier's offset (empty stays empty).
 */
export function parquetTimeSql(column: string): string {
  return `CAST(floor(epoch("${column}")) AS BIGINT)::VARCHAR`;
}

export function csvTimeSeconds(text: string): string {
  if (text === '') return text;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00$/.test(text)) throw new Error(`not a display time: ${text}`);
  return String(Date.parse(text) / 1000);
}

/** The file a report wrote of `table`, from the files its summary lists; fails when it wrote none. */
export function fileOf<F extends { readonly table: string }>(files: readonly F[], table: string): F {
  const file = files.find((f) => f.table === table);
  if (file === undefined)
    throw new Error(`no file of ${table}; the files are of ${files.map((f) => f.table).join(', ')}`);
  return file;
}
