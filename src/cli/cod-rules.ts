import type { CodRules } from '../reports/cod-report.js';
import { SETTINGS, type Settings } from '../settings/catalog.js';
import { loadConfigFile } from '../settings/config-file.js';
import { type ResolvedSettings, resolveSettings } from '../settings/resolve-settings.js';

/** The COD checks' rules, as the settings give them (`findings`, the jobs). */
export function codRulesOf(settings: ResolvedSettings<Settings>): CodRules {
  return {
    unpaidAfterDays: settings.values['cod.unpaidAfterDays'],
    moneyTolerance: settings.values['cod.moneyTolerance'],
  };
}

/**
 * The rules of `report cod`: its own flags (`--unpaid-after-days`, `--money-tolerance`), else the
 * environment and the configuration file every report reads (`--config`), else the defaults.
 */
export async function reportCodRules(flags: object, env: NodeJS.ProcessEnv): Promise<CodRules> {
  const file = await loadConfigFile('report', flags, env);
  return codRulesOf(resolveSettings(SETTINGS, { command: 'report cod', flags, env, file }));
}
