import { readFile, stat } from 'node:fs/promises';
import { KeyRing } from '../carriers/client/key-ring.js';
import { UserError } from '../errors/user-error.js';
import { SETTINGS, type Settings } from '../settings/catalog.js';
import type { ResolvedSettings } from '../settings/resolve-settings.js';
import type { SettingOrigin } from '../settings/setting.js';

export const API_KEYS_ENV = SETTINGS.apiKeys.env;

const ALIAS = /^[A-Za-z0-9_.-]{1,64}$/;

function checkAlias(alias: string, where: string): void {
  if (!ALIAS.test(alias))
    throw new UserError(
      `${where}: account alias ${JSON.stringify(alias.slice(0, 70))} must be 1 to 64 letters, digits, '.', '_' or '-'`,
    );
}

/** `alias=key,alias2=key2`; a bare key is alias `default`. Messages name the alias, never the key. */
export function parseApiKeysVariable(text: string): KeyRing {
  const entries: [string, string][] = [];
  for (const [index, part] of text.split(',').entries()) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const alias = eq === -1 ? 'default' : item.slice(0, eq).trim();
    const key = eq === -1 ? item : item.slice(eq + 1).trim();
    checkAlias(alias, `${API_KEYS_ENV} entry ${index + 1}`);
    if (key === '') throw new UserError(`${API_KEYS_ENV}: account ${alias} has an empty key`);
    if (entries.some(([a]) => a === alias)) throw new UserError(`${API_KEYS_ENV}: account ${alias} is given twice`);
    entries.push([alias, key]);
  }
  if (entries.length === 0) throw new UserError(`${API_KEYS_ENV} holds no key`);
  return new KeyRing(entries);
}

/** The text of a file holding a secret (`what` names it in messages), refused when other users can read it. */
export async function readPrivateFile(path: string, what: string): Promise<string> {
  let mode: number;
  let text: string;
  try {
    mode = (await stat(path)).mode;
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UserError(`cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new UserError(
      `${what} ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${path}`,
    );
  }
  return text;
}

/** A JSON file `{alias: key}`, refused when other users can read it. */
export async function readKeysFile(path: string): Promise<KeyRing> {
  const text = await readPrivateFile(path, 'keys file');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UserError(`keys file ${path} is not JSON: expected {"alias": "key", ...}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UserError(`keys file ${path}: expected a JSON object {"alias": "key", ...}`);
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 0) throw new UserError(`keys file ${path} holds no key`);
  return new KeyRing(
    entries.map(([alias, key]) => {
      checkAlias(alias, `keys file ${path}`);
      if (typeof key !== 'string' || key.trim() === '')
        throw new UserError(`keys file ${path}: the key of account ${alias} must be a non-empty string`);
      return [alias, key.trim()] as const;
    }),
  );
}

const ORIGIN_RANK: Readonly<Record<SettingOrigin['kind'], number>> = { flag: 0, environment: 1, file: 2, default: 3 };

/**
 * The API keys the settings give, from the first place that gives any: `--keys-file`, then
 * $PARCEL_RECON_API_KEYS, then the configuration's keysFile, then its apiKeys.
 */
export async function settingsKeyRing(settings: ResolvedSettings<Settings>): Promise<KeyRing> {
  const { values, origins } = settings;
  const keysFileRank = ORIGIN_RANK[origins.keysFile.kind];
  const apiKeysRank = ORIGIN_RANK[origins.apiKeys.kind];
  if (values.keysFile !== undefined && keysFileRank <= apiKeysRank) return readKeysFile(values.keysFile);
  const apiKeys = values.apiKeys;
  if (typeof apiKeys === 'string') return parseApiKeysVariable(apiKeys);
  if (apiKeys !== undefined) return new KeyRing(Object.entries(apiKeys));
  throw new UserError(
    `no API keys: set ${API_KEYS_ENV}=alias=key,..., give --keys-file FILE, or keysFile (apiKeys in a mode 600 file) in the configuration; keys never go on the command line`,
  );
}
