import type { Logger } from 'pino';
import type { JobSettings } from '../../jobs/job-definition.js';
import type { JobNotifySettings } from '../../jobs/job-notification.js';
import type { KeyRing } from '../carrier/client/key-ring.js';
import { UserError } from '../errors/user-error.js';
import { dataFolder, defaultDataDir } from '../warehouse/data-folder.js';
import { API_KEYS_ENV, loadApiKeys, readKeysFile } from './api-keys-config.js';
import { callbackJournalDir } from './callback-journal-config.js';
import { TRACKING_URL_ENV, trackRunOptionsFromFlags } from './commands/track-command.js';
import { configKeyRing, NOTIFY_URL_ENV, NotifySectionSchema, type ParcelReconConfig } from './config-file.js';
import { BASE_URL_ENV, CustomerOperationFlagsSchema, customerRunOptions } from './customer-operation-options.js';
import { displayTimeZone, TIME_ZONE_ENV } from './display-time-zone.js';
import { retentionDays } from './retention-age.js';
import { REDIS_URL_ENV } from './shared-quota-config.js';
import { DB_ENV, DEFAULT_DB } from './warehouse-location.js';

/** The keys a job uses: $PARCEL_RECON_API_KEYS, else the configuration's keysFile, else its own apiKeys. */
async function jobKeys(config: ParcelReconConfig, env: NodeJS.ProcessEnv): Promise<KeyRing> {
  if (env[API_KEYS_ENV] !== undefined && env[API_KEYS_ENV].trim() !== '') return loadApiKeys(undefined, env);
  if (config.keysFile !== undefined) return readKeysFile(config.keysFile);
  const inline = configKeyRing(config);
  if (inline !== undefined) return inline;
  throw new UserError(
    `no API keys: set ${API_KEYS_ENV}, or keysFile (or apiKeys, in a mode 600 file) in the configuration`,
  );
}

export function jobDbPath(config: ParcelReconConfig, env: NodeJS.ProcessEnv): string {
  return env[DB_ENV] ?? config.warehouse ?? DEFAULT_DB;
}

/**
 * The job notification's settings: the configuration's `notify` section with the URL from the
 * variable it names. Without a section, $PARCEL_RECON_NOTIFY_URL alone turns it on with the defaults.
 */
export function jobNotifySettings(config: ParcelReconConfig, env: NodeJS.ProcessEnv): JobNotifySettings | undefined {
  const urlOf = (name: string) => (env[name]?.trim() ? env[name].trim() : undefined);
  if (config.notify === undefined && urlOf(NOTIFY_URL_ENV) === undefined) return undefined;
  const notify = config.notify ?? NotifySectionSchema.parse({});
  return { ...notify, url: urlOf(notify.urlEnv) };
}

/** A job's settings from the configuration, the environment overriding it; each part is checked when a step needs it. */
export function jobSettingsFromConfig(config: ParcelReconConfig, env: NodeJS.ProcessEnv, logger: Logger): JobSettings {
  const dbPath = jobDbPath(config, env);
  const dataDir = config.dataDir ?? defaultDataDir(dbPath);
  return {
    dbPath,
    dataDir,
    dayUtcOffsetMinutes: config.dayUtcOffset,
    timeZone: displayTimeZone([
      [env[TIME_ZONE_ENV], TIME_ZONE_ENV],
      [config.timeZone, 'timeZone'],
    ]),
    callbacksJournalDir: callbackJournalDir(dataDir, config.callbacks.journalDir, env),
    reports: {
      outDir: config.reports.outDir ?? dataFolder(dataDir).reports,
      format: config.reports.format,
      periodDays: config.reports.periodDays,
    },
    snapshotTo: config.export?.to,
    financeAudit: { invoices: config.financeAudit.invoices, destinations: config.financeAudit.destinations },
    trackMemoryLimit: config.track.memoryLimit,
    retention:
      config.retention === undefined
        ? undefined
        : { olderThanDays: retentionDays(config.retention.olderThan)!, compact: config.retention.compact },
    pricing: async () => {
      const flags = CustomerOperationFlagsSchema.parse({
        baseUrl: env[BASE_URL_ENV] ?? config.baseUrl,
        db: dbPath,
        dataDir,
        ...config.price,
      });
      const { options } = await customerRunOptions(
        flags,
        env,
        logger,
        'finance-audit-price',
        await jobKeys(config, env),
      );
      return options;
    },
    tracking: async () => {
      const source = config.source;
      if (source === undefined)
        throw new UserError(
          'the configuration has no source: give source.inputs, source.fromDuckdb, source.fromPostgres or source.fromMysql with source.query',
        );
      const { redis, ...track } = config.track;
      const { options, redisUrl } = await trackRunOptionsFromFlags(
        {
          input: source.inputs ?? [],
          delimiter: source.delimiter,
          fromDuckdb: source.fromDuckdb,
          fromPostgres: source.fromPostgres,
          fromMysql: source.fromMysql,
          mysqlPasswordFile: source.mysqlPasswordFile,
          query: source.query,
          trackingUrl: env[TRACKING_URL_ENV] ?? config.trackingUrl,
          db: dbPath,
          dataDir,
          dayUtcOffset: config.dayUtcOffset,
          ...track,
          // Given no URL, the flags fall back to $PARCEL_RECON_REDIS_URL: the environment overrides the configuration.
          redis: env[REDIS_URL_ENV] === undefined ? redis : undefined,
        },
        env,
        logger,
        await jobKeys(config, env),
      );
      return { ...options, redisUrl };
    },
  };
}
