import { readFile, stat } from 'node:fs/promises';
import type { z } from 'zod';
import { SETTINGS } from './catalog.js';
import { configFileSchema } from './config-schema.js';
import { type ConfigFileContents, resolveSettings } from './resolve-settings.js';
import { SettingError, type SettingsCommand } from './setting.js';

/** The configuration file's schema: every key optional, unknown keys refused. */
export const CONFIG_FILE_SCHEMA = configFileSchema(SETTINGS);

/** A zod issue path as a person writes it: `jobs.nightly.schedule`, `source.inputs[0]`. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

function describeConfigIssue(file: string, issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length === 0 ? '' : `${fieldPath(issue.path)}.`;
    return `config ${file}: unknown field ${issue.keys.map((key) => `${where}${key}`).join(', ')}`;
  }
  return `config ${file}: ${fieldPath(issue.path) || '(top level)'}: ${issue.message}`;
}

/** Checks a decoded configuration; the first problem is one line naming its field. */
export function parseConfig(value: unknown, file: string): ConfigFileContents {
  const checked = CONFIG_FILE_SCHEMA.safeParse(value);
  if (!checked.success) throw new SettingError(describeConfigIssue(file, checked.error.issues[0]!));
  return { path: file, contents: value as Record<string, unknown> };
}

/**
 * Reads the configuration file: `--config`, else $PARCEL_RECON_CONFIG, else parcel-recon.config.json
 * in the working folder. A file that was not named and does not exist is no file; a named one must exist.
 */
export async function loadConfigFile(
  command: SettingsCommand | undefined,
  flags: object,
  env: NodeJS.ProcessEnv,
): Promise<ConfigFileContents | null> {
  const { values, origins } = resolveSettings({ config: SETTINGS.config }, { command, flags, env, file: null });
  const file = values.config;
  let text: string;
  let mode: number;
  try {
    mode = (await stat(file)).mode;
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && origins.config.kind === 'default') return null;
    throw new SettingError(`cannot read config ${file}: ${code ?? 'error'}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SettingError(`config ${file} is not JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const config = parseConfig(value, file);
  if (config.contents.apiKeys !== undefined && (mode & 0o077) !== 0) {
    throw new SettingError(
      `config ${file} holds apiKeys and can be read by other users (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${file}, or move the keys to a keys file or ${SETTINGS.apiKeys.env}`,
    );
  }
  return config;
}
