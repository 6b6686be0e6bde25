import { moneyDecimal } from '../carriers/answer-sql.js';
import type { PriceQuote, PriceQuoteRequest } from '../carriers/carrier-price-quotes.js';
import type { CarrierInstant } from '../carriers/carrier-time.js';
import { refreshChargeAudit } from './charge-audit-rows.js';
import { spoolFileRows, withNdjsonSpool } from './ndjson-spool.js';
import { recordChangedRows } from './partition-change-ledger.js';
import { sqlText } from './sql-literals.js';
import type { SqlRunner, Warehouse } from './warehouse.js';

/** error_code of a quote the carrier refused. */
export const QUOTE_CARRIER_ERROR = 'CARRIER_ERROR';

/** One quote asked in a run: the request as sent, and the quote or why there is none. */
export interface PriceQuoteRow {
  readonly quoteId: string;
  readonly runId: string;
  readonly orderCode: string | null;
  readonly accountAlias: string;
  readonly request: PriceQuoteRequest;
  /** The quote; null when it failed. */
  readonly result: PriceQuote | null;
  /** QUOTE_CARRIER_ERROR, or the failure's code (LOOKUP_MALFORMED, ...) after every retry; null when ok. */
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  readonly quotedAt: CarrierInstant;
}

function quoteSpoolLine(row: PriceQuoteRow): string {
  const { request: q, result: r } = row;
  return JSON.stringify({
    quoteId: row.quoteId,
    runId: row.runId,
    orderCode: row.orderCode,
    accountAlias: row.accountAlias,
    toProvinceName: q.toProvinceName,
    toDistrictName: q.toDistrictName,
    toWardName: q.toWardName,
    length: q.length,
    width: q.width,
    height: q.height,
    realWeight: q.realWeight,
    clientHubId: q.clientHubId,
    serviceTypeId: q.serviceTypeId,
    ok: r !== null,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    mainPrice: r?.mainPrice ?? null,
    totalServiceCost: r?.totalServiceCost ?? null,
    couponMoneyRemainder: r?.couponMoneyRemainder ?? null,
    depositChangeAmount: r?.depositChangeAmount ?? null,
    calWeight: r?.calWeight ?? null,
    weight: r?.weight ?? null,
    priceMatrixId: r?.priceMatrixId ?? null,
    quotedAt: row.quotedAt,
  });
}

function* lineSpoolLines(rows: readonly PriceQuoteRow[]): Generator<string> {
  for (const row of rows) {
    for (const [index, line] of (row.result?.lines ?? []).entries()) {
      yield JSON.stringify({
        quoteId: row.quoteId,
        lineNo: index + 1,
        extraServiceId: line.extraServiceId,
        serviceId: line.serviceId,
        serviceName: line.serviceName,
        type: line.type,
        cost: line.cost,
        informFee: line.informFee,
        isDefaultService: line.isDefaultService,
      });
    }
  }
}

/** The fields of a quote's spool line (quoteSpoolLine). */
const QUOTE_FIELDS = {
  quoteId: 'VARCHAR',
  runId: 'VARCHAR',
  orderCode: 'VARCHAR',
  accountAlias: 'VARCHAR',
  toProvinceName: 'VARCHAR',
  toDistrictName: 'VARCHAR',
  toWardName: 'VARCHAR',
  length: 'DOUBLE',
  width: 'DOUBLE',
  height: 'DOUBLE',
  realWeight: 'DOUBLE',
  clientHubId: 'VARCHAR',
  serviceTypeId: 'VARCHAR',
  ok: 'BOOLEAN',
  errorCode: 'VARCHAR',
  errorMessage: 'VARCHAR',
  mainPrice: 'VARCHAR',
  totalServiceCost: 'VARCHAR',
  couponMoneyRemainder: 'VARCHAR',
  depositChangeAmount: 'VARCHAR',
  calWeight: 'DOUBLE',
  weight: 'DOUBLE',
  priceMatrixId: 'VARCHAR',
  quotedAt: 'TIMESTAMPTZ',
} as const;

/** The fields of a quote line's spool line (lineSpoolLines). */
const QUOTE_LINE_FIELDS = {
  quoteId: 'VARCHAR',
  lineNo: 'INTEGER',
  extraServiceId: 'INTEGER',
  serviceId: 'VARCHAR',
  serviceName: 'VARCHAR',
  type: 'INTEGER',
  cost: 'VARCHAR',
  informFee: 'VARCHAR',
  isDefaultService: 'BOOLEAN',
} as const;

/**
 * Loads quotes and their charge lines in one transaction through two NDJSON spool files. A
 * failed quote is a row with ok = false, its error code and message, and no lines. Money enters as
 * exact decimal text and is stored as DECIMAL(20,4). Loading the same quotes again replaces them.
 * The quotes are `carrier`'s.
 */
export async function loadPriceQuotes(
  warehouse: Warehouse,
  rows: readonly PriceQuoteRow[],
  spoolDir: string,
  carrier: string,
): Promise<void> {
  if (rows.length === 0) return;
  const ofCarrier = sqlText(carrier);
  await withNdjsonSpool(spoolDir, 'price-quotes', async (spool) => {
    const quotesFile = await spool.write(rows.map(quoteSpoolLine));
    const linesFile = await spool.write(lineSpoolLines(rows));
    const storedQuotes = `SELECT * FROM price_quotes WHERE carrier = ${ofCarrier} AND quote_id IN (SELECT quoteId FROM ${spoolFileRows('$file', quotesFile, { quoteId: 'VARCHAR' })})`;
    // The quotes' partitions, and their lines' (placed by the quote's time), before they are replaced and after.
    const recordQuotes = async (sql: SqlRunner) => {
      for (const table of ['price_quotes', 'price_quote_lines'])
        await recordChangedRows(sql, table, storedQuotes, { file: quotesFile.path });
    };
    await warehouse.loadTransaction(
      async (sql) => {
        await recordQuotes(sql);
        await sql.run(
          `INSERT OR REPLACE INTO price_quotes BY NAME
         SELECT ${ofCarrier} AS carrier, quoteId AS quote_id, runId AS run_id, orderCode AS order_code, accountAlias AS account_alias,
                toProvinceName AS to_province_name, toDistrictName AS to_district_name, toWardName AS to_ward_name,
                length, width, height, realWeight AS real_weight, clientHubId AS client_hub_id, serviceTypeId AS service_type_id,
                ok, errorCode AS error_code, errorMessage AS error_message,
                ${moneyDecimal('mainPrice')} AS main_price, ${moneyDecimal('totalServiceCost')} AS total_service_cost,
                ${moneyDecimal('couponMoneyRemainder')} AS coupon_money_remainder, ${moneyDecimal('depositChangeAmount')} AS deposit_change_amount,
                calWeight AS cal_weight, weight, priceMatrixId AS price_matrix_id, quotedAt AS quoted_at
         FROM ${spoolFileRows('$file', quotesFile, QUOTE_FIELDS)}`,
          { file: quotesFile.path },
        );
        await sql.run(
          `DELETE FROM price_quote_lines WHERE carrier = ${ofCarrier} AND quote_id IN (SELECT quoteId FROM ${spoolFileRows('$file', quotesFile, { quoteId: 'VARCHAR' })})`,
          {
            file: quotesFile.path,
          },
        );
        await sql.run(
          `INSERT INTO price_quote_lines BY NAME
         SELECT ${ofCarrier} AS carrier, quoteId AS quote_id, lineNo AS line_no, extraServiceId AS extra_service_id, serviceId AS service_id,
                serviceName AS service_name, type, ${moneyDecimal('cost')} AS cost, ${moneyDecimal('informFee')} AS inform_fee,
                isDefaultService AS is_default_service
         FROM ${spoolFileRows('$file', linesFile, QUOTE_LINE_FIELDS)}`,
          { file: linesFile.path },
        );
        await recordQuotes(sql);
        // A quote's latest success is an input of its order's audit row.
        await refreshChargeAudit(
          sql,
          `SELECT carrier, order_code FROM price_quotes WHERE carrier = ${ofCarrier} AND order_code IS NOT NULL AND quote_id IN (SELECT quoteId FROM ${spoolFileRows('$file', quotesFile, { quoteId: 'VARCHAR' })})`,
          { file: quotesFile.path },
        );
      },
      `a batch of ${rows.length} price quotes`,
      ['batchSize'],
    );
  });
}
