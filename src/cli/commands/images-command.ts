import { Command, Option } from 'commander';
import { z } from 'zod';
import type { ImageDownloadPolicy } from '../../carriers/client/image-download.js';
import { UserError } from '../../errors/user-error.js';
import { type ImagesRunSummary, runOrderImages } from '../../pipeline/images-run.js';
import { loadSettings } from '../../settings/load-settings.js';
import { fileSource } from '../../sources/file-source.js';
import type { OrderCodeSource, SourceItem } from '../../sources/order-code-source.js';
import {
  CustomerOperationFlagsSchema,
  customerRunOptions,
  runOnWarehouse,
  withCustomerOperationFlags,
} from '../customer-operation-options.js';
import { checkFlags } from '../flag-check.js';
import { createLogger } from '../logger.js';

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

const ImagesFlagsSchema = CustomerOperationFlagsSchema.extend({
  codes: z.string().optional(),
  input: z.array(z.string()).default([]),
  delimiter: z.enum([',', ';']).optional(),
  download: z.string().min(1).optional(),
  allowHost: z
    .array(
      z
        .string()
        .trim()
        .toLowerCase()
        .regex(/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/, 'a host name or host:port'),
    )
    .default([]),
  maxBytes: z.coerce.number().int().positive().default(DEFAULT_MAX_BYTES),
  job: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'lower-case letters, digits and -')
    .default('images'),
});

/** Codes given on the command line, comma separated, as a source. */
function codesSource(codes: string): OrderCodeSource {
  const list = codes
    .split(',')
    .map((code) => code.trim())
    .filter((code) => code !== '');
  return {
    description: `codes:${list.length}`,
    async *items(): AsyncGenerator<SourceItem> {
      for (const [index, orderCode] of list.entries())
        yield { kind: 'code', code: { orderCode, account: null, origin: `--codes item ${index + 1}` } };
    },
  };
}

export function describeImagesSummary(summary: ImagesRunSummary, dbPath: string): string {
  const lines = [
    `run ${summary.runId}: ${summary.exitState} (exit ${summary.exitCode})`,
    `  orders asked ${summary.ordersToAsk}, rejected ${summary.rejected}; lists stored ${summary.listsStored} (${summary.emptyLists} empty), images ${summary.images}`,
    `  refused by the carrier ${summary.carrierErrors}${
      Object.keys(summary.carrierErrorsByCode).length
        ? ` (${Object.entries(summary.carrierErrorsByCode)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')})`
        : ''
    }, failed ${summary.failed}${summary.deferred > 0 ? `, not asked ${summary.deferred} (KEY_NOT_FOUND)` : ''}; requests sent ${summary.requestsSent}`,
  ];
  if (summary.downloads) {
    const refused = Object.entries(summary.downloads.refusedByCode)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    lines.push(
      `  downloaded ${summary.downloads.saved}, refused ${summary.downloads.refused}${refused ? ` (${refused})` : ''}`,
    );
    if (summary.downloads.notWritten > 0)
      lines.push(`  not written ${summary.downloads.notWritten}: ${summary.downloads.notWrittenCause}`);
  }
  lines.push(
    `  warehouse ${dbPath} (order_image_lists, order_images, lookup_results)${summary.rejectsFile ? `; rejects ${summary.rejectsFile}` : ''}`,
  );
  const shown = summary.failedOrders.slice(0, 10);
  for (const failed of shown) lines.push(`  failed: ${failed.orderCode} ${failed.errorCode}: ${failed.errorMessage}`);
  if (summary.failed > shown.length) lines.push(`  and ${summary.failed - shown.length} more failed (lookup_results)`);
  return `${lines.join('\n')}\n`;
}

export function imagesCommand(): Command {
  const command = new Command('images')
    .description(
      'Fetch the image lists of orders (by default: delivered orders with no list stored) into the warehouse; optionally download the files.',
    )
    .option('--codes <list>', 'order codes, comma separated')
    .addOption(
      new Option(
        '--input <file>',
        'CSV or .xlsx (its first sheet) with an order_code column (and optionally account); repeatable',
      ).argParser((v: string, prev: string[] = []) => [...prev, v]),
    )
    .addOption(
      new Option('--delimiter <char>', 'CSV delimiter (default: detected from the header)').choices([',', ';']),
    )
    .option('--download <dir>', 'download the image files into this folder (named ORDERCODE-No.ext)')
    .addOption(
      new Option(
        '--allow-host <host>',
        "a host images may be downloaded from (host or host:port); repeatable (default: the base URL's host)",
      ).argParser((v: string, prev: string[] = []) => [...prev, v]),
    )
    .option('--max-bytes <n>', `largest image file accepted, in bytes (default: ${DEFAULT_MAX_BYTES})`)
    .option('--job <name>', 'job name recorded with the run (default: images)');
  return withCustomerOperationFlags(command, 'images').action(async (raw: Record<string, unknown>) => {
    const flags = checkFlags(ImagesFlagsSchema, raw);
    const logger = createLogger({ level: flags.logLevel });
    const settings = await loadSettings('images', raw, process.env);
    const options = await customerRunOptions(settings, process.env, logger, flags.job, 'images');
    const dbPath = settings.values.warehouse;
    if (flags.download === undefined && (flags.allowHost.length > 0 || raw.maxBytes !== undefined))
      throw new UserError('--allow-host and --max-bytes need --download DIR');
    const sources = [
      ...(flags.codes === undefined ? [] : [codesSource(flags.codes)]),
      ...flags.input.map((input) => fileSource(input, flags.delimiter)),
    ];
    const download: ImageDownloadPolicy | undefined =
      flags.download === undefined
        ? undefined
        : {
            dir: flags.download,
            allowedHosts:
              flags.allowHost.length > 0 ? flags.allowHost : [new URL(options.client.baseUrl).host.toLowerCase()],
            maxBytes: flags.maxBytes,
            timeoutMs: options.client.timeoutMs,
          };
    await runOnWarehouse(
      dbPath,
      flags,
      logger,
      (warehouse, control) => runOrderImages({ ...options, ...control, warehouse, sources, download }),
      describeImagesSummary,
    );
  });
}
