import type { Logger } from 'pino';
import type { TrackingSettings } from '../../jobs/job-definition.js';
import { RUN_EXIT_CODES } from '../errors/exit-codes.js';
import { UserError } from '../errors/user-error.js';
import { parseShard } from '../pipeline/tracking/shard.js';
import { carrierQuotaPolicy } from '../quota/quota-policy.js';
import { SETTINGS, type Settings } from '../settings/catalog.js';
import type { ResolvedSettings } from '../settings/resolve-settings.js';
import { fileSource } from '../sources/file-source.js';
import type { OrderCodeSource } from '../sources/order-code-source.js';
import { queryOrderCodeSource } from '../sources/query-order-codes.js';
import { settingsKeyRing, withAccountShops } from './api-keys-config.js';
import { querySourceOf } from './query-source-flags.js';
import { runClock } from './run-clock.js';

const NO_SOURCE = {
  command:
    'no order codes to read: give --input FILE (or - for stdin), --from-duckdb FILE --query SQL, --from-postgres URL --query SQL or --from-mysql URL --query SQL',
  job: 'the configuration has no source: give source.inputs, source.fromDuckdb, source.fromPostgres or source.fromMysql with source.query',
} as const;

async function orderCodeSources(
  settings: ResolvedSettings<Settings>,
  env: NodeJS.ProcessEnv,
  wording: keyof typeof NO_SOURCE,
): Promise<OrderCodeSource[]> {
  const v = settings.values;
  const query = v['source.query'];
  const delimiter = v['source.delimiter'];
  const sources: OrderCodeSource[] = (v['source.inputs'] ?? []).map((input) => fileSource(input, delimiter));
  // Each database named gives its codes; the query is the same for all of them.
  const databases = [
    { fromDuckdb: v['source.fromDuckdb'] },
    { fromPostgres: v['source.fromPostgres'] },
    { fromMysql: v['source.fromMysql'], mysqlPasswordFile: v['source.mysqlPasswordFile'] },
  ];
  for (const database of databases) {
    const table = await querySourceOf({ ...database, query }, env, 'order_code (and optionally account)');
    if (table !== undefined) sources.push(queryOrderCodeSource(table));
  }
  if (sources.length === 0) throw new UserError(NO_SOURCE[wording]);
  return sources;
}

/**
 * A tracking run's options from resolved settings, checked before anything is read or spent: what
 * `track` and a job's tracking step both run. A plan asks the carrier nothing: it needs no tracking URL.
 */
export async function trackingOptions(
  settings: ResolvedSettings<Settings>,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  use: { readonly wording: 'command' | 'job'; readonly plan?: boolean },
): Promise<TrackingSettings> {
  const v = settings.values;
  const sources = await orderCodeSources(settings, env, use.wording);
  const trackingUrl = v.trackingUrl ?? (use.plan ? '' : undefined);
  if (trackingUrl === undefined)
    throw new UserError(`no tracking URL: give --tracking-url URL or set ${SETTINGS.trackingUrl.env}`);
  const concurrency = v['track.concurrency'];
  return {
    redisUrl: v['track.redis'],
    exitCodes: RUN_EXIT_CODES,
    shard: v['track.shard'] === undefined ? undefined : parseShard(v['track.shard']),
    sources,
    carrier: v.carrier,
    keys: withAccountShops(await settingsKeyRing(settings), v.carrier),
    dataDir: v.dataDir,
    client: {
      trackingUrl,
      timeoutMs: v['track.timeoutMs'],
      maxAnswerBytes: v['track.maxAnswerBytes'],
      connections: Math.min(concurrency, 256),
    },
    quota: carrierQuotaPolicy(v.carrier, {
      perKeyDaily: v['track.perKeyLimit'],
      globalDaily: v['track.globalLimit'],
      reservePerKey: v['track.reservePerKey'],
      reserveGlobal: v['track.reserveGlobal'],
      dayUtcOffsetMinutes: v.dayUtcOffset,
      maxConcurrent: concurrency,
      requestsPerSecond: v['track.rate'],
    }),
    retry: {
      attempts: v['track.attempts'],
      minDelayMs: v['track.retryMinMs'],
      maxDelayMs: Math.max(v['track.retryMinMs'], v['track.retryMaxMs']),
    },
    breakerAttempts: v['track.breakerAttempts'],
    batchSize: v['track.batchSize'],
    refreshTerminal: v['track.refreshTerminal'],
    maxLookups: v['track.maxLookups'],
    now: runClock(env),
    logger,
    graceMs: v['track.graceMs'],
  };
}
