import { type Command, Option } from 'commander';
import type { Setting, SettingsCatalog, SettingsCommand } from './setting.js';

/** The default as help and the docs show it; undefined when the setting has none. */
export function defaultShown(setting: Setting): string | undefined {
  if (setting.defaultText !== undefined) return setting.defaultText;
  if (setting.default === undefined || typeof setting.default === 'function') return undefined;
  return typeof setting.default === 'string' ? setting.default : JSON.stringify(setting.default);
}

/** A flag's help: what it sets, then where else the value may come from, then its default. */
function flagHelp(setting: Setting): string {
  const elsewhere = [
    setting.env === undefined ? undefined : `$${setting.env}`,
    setting.configKey === undefined ? undefined : `config ${setting.configKey}`,
  ].filter((place) => place !== undefined);
  const shown = defaultShown(setting);
  const notes = [
    elsewhere.length === 0 ? undefined : `else ${elsewhere.join(', else ')}`,
    shown === undefined ? undefined : `default: ${shown}`,
  ].filter((note) => note !== undefined);
  return notes.length === 0 ? setting.help : `${setting.help} (${notes.join('; ')})`;
}

/** The commander options of a command's settings, in the catalog's order. */
function settingOptions(catalog: SettingsCatalog, command: SettingsCommand): Option[] {
  return Object.values(catalog)
    .filter((setting) => setting.flag !== undefined && setting.commands.includes(command))
    .map((setting) => {
      const option = new Option(setting.flag!, flagHelp(setting));
      return setting.repeatable
        ? option.argParser((value: string, earlier: string[] = []) => [...earlier, value])
        : option;
    });
}

/** The environment variables a command reads, for the end of its help: the jobs read every one. */
function environmentHelp(catalog: SettingsCatalog, command: SettingsCommand): string {
  const variables = Object.values(catalog)
    .filter((setting) => setting.env !== undefined && (command === 'jobs' || setting.commands.includes(command)))
    .map((setting) => setting.env!);
  return `\nEnvironment (over the configuration file): ${variables.join(', ')}.`;
}

/**
 * Adds a command's settings to it as flags, and the variables it reads to its help; the precedence
 * is the resolver's, so commander sets no default.
 */
export function withSettingOptions<T extends Command>(
  program: T,
  command: SettingsCommand,
  catalog: SettingsCatalog,
): T {
  for (const option of settingOptions(catalog, command)) program.addOption(option);
  program.addHelpText('after', environmentHelp(catalog, command));
  return program;
}
