import type { Logger } from 'pino';
import type { JobSettings } from '../../jobs/job-definition.js';
import { jobSettings } from '../../src/cli/job-settings.js';
import { SETTINGS } from '../../src/settings/catalog.js';
import { parseConfig } from '../../src/settings/config-file.js';
import { resolveSettings } from '../../src/settings/resolve-settings.js';

/** A job's settings from a configuration file's contents and an environment, as `jobs run` resolves them. */
export function jobSettingsFrom(config: unknown, env: NodeJS.ProcessEnv, logger: Logger): JobSettings {
  return jobSettings(resolveSettings(SETTINGS, { env, file: parseConfig(config, 'x.json') }), env, logger);
}
