import type { Logger } from 'pino';
import type { JobSettings } from '../../jobs/job-definition.js';
import type { JobNotifySettings } from '../../jobs/job-notification.js';
import { type AlsoTrack, AlsoTrackSchema, NotifySectionSchema, type Settings } from '../settings/catalog.js';
import type { ResolvedSettings } from '../settings/resolve-settings.js';
import { retentionDays } from '../settings/value-types.js';
import { codRulesOf } from './cod-rules.js';
import { customerRunOptions } from './customer-operation-options.js';
import { trackingOptions } from './track-run-options.js';

/**
 * The job notification's settings: the configuration's `notify` section with the URL from the
 * variable it names. Without a section, $PARCEL_RECON_NOTIFY_URL alone turns it on with the defaults.
 */
export function jobNotifySettings(
  settings: ResolvedSettings<Settings>,
  env: NodeJS.ProcessEnv,
): JobNotifySettings | undefined {
  const { notify, notifyUrl } = settings.values;
  if (notify === undefined && notifyUrl === undefined) return undefined;
  const section = notify ?? NotifySectionSchema.parse({});
  const url = env[section.urlEnv]?.trim();
  return { ...section, url: url === '' ? undefined : url };
}

/** A job's run settings, taken from the resolved settings as they are; the tracking and price runs are built when a step needs them. */
export function jobSettings(settings: ResolvedSettings<Settings>, env: NodeJS.ProcessEnv, logger: Logger): JobSettings {
  const v = settings.values;
  const olderThan = v['retention.olderThan'];
  return {
    dbPath: v.warehouse,
    dataDir: v.dataDir,
    dayUtcOffsetMinutes: v.dayUtcOffset,
    timeZone: v.timeZone,
    callbacksJournalDir: v.callbackJournal,
    reports: { outDir: v['reports.outDir'], format: v['reports.format'], periodDays: v['reports.periodDays'] },
    snapshotTo: v['export.to'],
    cod: codRulesOf(settings),
    financeAudit: { invoices: v['financeAudit.invoices'], destinations: v['financeAudit.destinations'] },
    trackMemoryLimit: v['track.memoryLimit'],
    retention:
      olderThan === undefined
        ? undefined
        : { olderThanDays: retentionDays(olderThan)!, compact: v['retention.compact'] },
    pricing: () => customerRunOptions(settings, env, logger, 'finance-audit-price', 'price'),
    tracking: () => trackingOptions(settings, env, logger, { wording: 'job' }),
    alsoTracked: v.alsoTrack.map((section) => ({
      carrier: section.carrier,
      tracking: () => trackingOptions(carrierSettings(settings, section), env, logger, { wording: 'job' }),
    })),
  };
}

/**
 * The settings with a carrier's section of `alsoTrack` in place of the configured carrier's: its
 * carrier, address and source, and its keys file when it names one (the same keys otherwise).
 */
function carrierSettings(settings: ResolvedSettings<Settings>, section: AlsoTrack): ResolvedSettings<Settings> {
  const inSection = settings.origins.alsoTrack;
  // The section's source replaces the configured one whole: a key it leaves out is unset.
  const source = Object.fromEntries(
    Object.keys(AlsoTrackSchema.shape.source.shape).map((key) => [
      `source.${key}`,
      section.source[key as keyof AlsoTrack['source']],
    ]),
  );
  const values = {
    ...settings.values,
    carrier: section.carrier,
    trackingUrl: section.trackingUrl,
    ...source,
    ...(section.keysFile === undefined ? {} : { keysFile: section.keysFile, apiKeys: undefined }),
  };
  const origins = {
    ...settings.origins,
    ...(section.keysFile === undefined ? {} : { keysFile: inSection, apiKeys: { kind: 'default' as const } }),
  };
  return { ...settings, values, origins };
}
