import { Command, Option } from 'commander';
import { z } from 'zod';
import { UserError } from '../../errors/user-error.js';
import { orderPriceRequests, type PriceInputSource, tablePriceRequests } from '../../pipeline/price-inputs.js';
import { type PriceRunSummary, runPriceQuotes } from '../../pipeline/price-run.js';
import { SETTINGS } from '../../settings/catalog.js';
import { loadSettings } from '../../settings/load-settings.js';
import { isWorkbook, tableFile } from '../../sources/table-rows.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import {
  CustomerOperationFlagsSchema,
  customerRunOptions,
  runOnWarehouse,
  withCustomerOperationFlags,
} from '../customer-operation-options.js';
import { checkFlags } from '../flag-check.js';
import { createLogger } from '../logger.js';
import { querySourceOf, querySourcesGiven } from '../query-source-flags.js';

const PriceFlagsSchema = CustomerOperationFlagsSchema.extend({
  input: z.string().optional(),
  forOrders: z.string().optional(),
  delimiter: z.enum([',', ';']).optional(),
  fromDuckdb: z.string().optional(),
  fromPostgres: z.union([z.string(), z.literal(true)]).optional(),
  fromMysql: z.union([z.string(), z.literal(true)]).optional(),
  mysqlPasswordFile: z.string().optional(),
  query: z.string().optional(),
  sheet: z.string().optional(),
  clientHubId: z.string().trim().min(1).optional(),
  job: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'lower-case letters, digits and -')
    .default('price'),
});

type PriceFlags = z.output<typeof PriceFlagsSchema>;

/** The source the flags name, checked before the warehouse is opened; --for-orders reads the warehouse it is given. */
async function sourceFromFlags(
  flags: PriceFlags,
  carrier: string,
  env: NodeJS.ProcessEnv,
): Promise<(warehouse: Warehouse) => PriceInputSource> {
  const given = [flags.input, flags.forOrders].filter((v) => v !== undefined).length + querySourcesGiven(flags);
  if (given === 0)
    throw new UserError(
      'no quote requests to read: give --input FILE, --for-orders FILE, --from-duckdb FILE --query SQL, --from-postgres URL --query SQL or --from-mysql URL --query SQL',
    );
  if (given > 1)
    throw new UserError('give one of --input, --for-orders, --from-duckdb, --from-postgres and --from-mysql');
  const { input, forOrders, sheet } = flags;
  const file = input ?? forOrders;
  if (sheet !== undefined && (file === undefined || !isWorkbook(file)))
    throw new UserError('--sheet: names a sheet of the .xlsx --input or --for-orders workbook');
  const options = { defaultClientHubId: flags.clientHubId, delimiter: flags.delimiter, sheet };
  if (input !== undefined) return () => tablePriceRequests(tableFile(input, options), options);
  if (forOrders !== undefined) return (warehouse) => orderPriceRequests(warehouse, carrier, forOrders, options);
  const query = await querySourceOf(flags, env, 'the request columns');
  return () => tablePriceRequests(query!, options);
}

/** A few lines a person reads at the end of a run. */
export function describePriceSummary(summary: PriceRunSummary, dbPath: string): string {
  const lines = [
    `run ${summary.runId}: ${summary.exitState} (exit ${summary.exitCode})`,
    `  rows read ${summary.rowsRead}, rejected ${summary.rejected}; quoted ${summary.quoted}, refused by the carrier ${summary.carrierErrors}, failed ${summary.failed}; requests sent ${summary.requestsSent}`,
    `  warehouse ${dbPath} (price_quotes, price_quote_lines)${summary.rejectsFile ? `; rejects ${summary.rejectsFile}` : ''}`,
  ];
  for (const problem of summary.problems.slice(0, 10))
    lines.push(
      `  ${problem.origin}${problem.orderCode ? ` ${problem.orderCode}` : ''}: ${problem.code}: ${problem.reason}`,
    );
  return `${lines.join('\n')}\n`;
}

export function priceCommand(): Command {
  const command = new Command('price')
    .description(
      "Quote parcels with the carrier's price calculation and keep every quote (request, answer, time) in the warehouse.",
    )
    .option(
      '--input <file>',
      'CSV or .xlsx with ToProvinceName, ToDistrictName, ToWardName, Length, Width, Height, RealWeight, ClientHubID, ServiceTypeID (snake_case too), optionally order_code and account',
    )
    .option(
      '--for-orders <file>',
      'quote tracked orders: CSV or .xlsx with order_code, ToProvinceName, ToDistrictName, ToWardName (optionally ClientHubID, account); measures and service type come from the warehouse',
    )
    .addOption(
      new Option('--delimiter <char>', 'CSV delimiter (default: detected from the header)').choices([',', ';']),
    )
    .option('--from-duckdb <file>', 'read the requests from a DuckDB file with --query')
    .option(
      '--from-postgres [url]',
      'read the requests from PostgreSQL with --query (no password in the URL: PGPASSWORD, ~/.pgpass, or the whole URL in $PARCEL_RECON_POSTGRES_URL)',
    )
    .option(
      '--from-mysql [url]',
      `read the requests from MySQL or MariaDB with --query (mysql://user@host:port/db, no password: it comes from $${SETTINGS.mysqlPassword.env} or --mysql-password-file; without a URL, the whole URL is taken from $${SETTINGS.mysqlUrl.env})`,
    )
    .option('--mysql-password-file <file>', "the --from-mysql password, the file's first line (mode 600)")
    .option('--query <sql>', 'SQL returning the request columns')
    .option('--sheet <name>', 'the sheet of an .xlsx --input or --for-orders workbook (default: the first)')
    .option('--client-hub-id <id>', 'ClientHubID for rows that have none')
    .option('--job <name>', 'job name recorded with the run (default: price)');
  return withCustomerOperationFlags(command, 'price').action(async (raw: Record<string, unknown>) => {
    const flags = checkFlags(PriceFlagsSchema, raw);
    const logger = createLogger({ level: flags.logLevel });
    const settings = await loadSettings('price', raw, process.env);
    const options = await customerRunOptions(settings, process.env, logger, flags.job, 'price');
    const dbPath = settings.values.warehouse;
    const source = await sourceFromFlags(flags, options.carrier, process.env);
    await runOnWarehouse(
      dbPath,
      flags,
      logger,
      (warehouse, control) => runPriceQuotes({ ...options, ...control, warehouse, source: source(warehouse) }),
      describePriceSummary,
    );
  });
}
