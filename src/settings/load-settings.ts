import { SETTINGS, type SettingName, type Settings } from './catalog.js';
import { loadConfigFile } from './config-file.js';
import { type ResolvedSettings, resolveSettings } from './resolve-settings.js';
import type { SettingsCommand } from './setting.js';

/**
 * A command's settings: its flags, the environment, the configuration file and the defaults, resolved
 * the one way every command and job takes. The settings the command takes are checked at once, before
 * anything runs; an earlier name still in use is one warning line on stderr.
 */
export async function loadSettings(
  command: SettingsCommand,
  flags: object,
  env: NodeJS.ProcessEnv,
): Promise<ResolvedSettings<Settings>> {
  const file = await loadConfigFile(command, flags, env);
  const resolved = resolveSettings(SETTINGS, { command, flags, env, file });
  for (const [name, setting] of Object.entries(SETTINGS))
    if ((setting.commands as readonly SettingsCommand[]).includes(command)) void resolved.values[name as SettingName];
  for (const warning of resolved.warnings) process.stderr.write(`parcel-recon: warning: ${warning}\n`);
  return resolved;
}
