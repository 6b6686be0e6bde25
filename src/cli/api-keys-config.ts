import { readFile, stat } from 'node:fs/promises';
import { KeyRing } from '../carriers/client/key-ring.js';
import { findCarrier } from '../carriers/known-carriers.js';
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

/** An account's shop at the carrier (GHN's ShopId): digits. */
const SHOP_ID = /^\d{1,20}$/;

function checkShop(shop: string, alias: string, where: string): void {
  if (!SHOP_ID.test(shop)) throw new UserError(`${where}: the shop of account ${alias} must be digits, such as 885`);
}

/** Keys by alias, with the shops of the accounts that name one. */
class KeyRingEntries {
  private readonly keys: [string, string][] = [];
  private readonly shops = new Map<string, string>();

  constructor(private readonly where: string) {}

  add(alias: string, key: string, shop?: string): void {
    checkAlias(alias, this.where);
    if (key === '') throw new UserError(`${this.where}: account ${alias} has an empty key`);
    if (this.keys.some(([a]) => a === alias)) throw new UserError(`${this.where}: account ${alias} is given twice`);
    if (shop !== undefined) {
      checkShop(shop, alias, this.where);
      this.shops.set(alias, shop);
    }
    this.keys.push([alias, key]);
  }

  keyRing(): KeyRing {
    if (this.keys.length === 0) throw new UserError(`${this.where} holds no key`);
    return new KeyRing(this.keys, this.shops);
  }
}

/**
 * `alias=key,alias2=key2`; a bare key is alias `default`; `alias:shop=key` names the account's shop
 * (GHN's ShopId). Messages name the alias, never the key.
 */
export function parseApiKeysVariable(text: string): KeyRing {
  const entries = new KeyRingEntries(API_KEYS_ENV);
  for (const [index, part] of text.split(',').entries()) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const account = eq === -1 ? 'default' : item.slice(0, eq).trim();
    const key = eq === -1 ? item : item.slice(eq + 1).trim();
    const colon = account.indexOf(':');
    const alias = colon === -1 ? account : account.slice(0, colon);
    checkAlias(alias, `${API_KEYS_ENV} entry ${index + 1}`);
    entries.add(alias, key, colon === -1 ? undefined : account.slice(colon + 1));
  }
  return entries.keyRing();
}

/** A key given in a file: its text, or `{key, shopId}` for an account with a shop. */
function addFileEntry(entries: KeyRingEntries, alias: string, value: unknown, where: string): void {
  if (typeof value === 'string') {
    entries.add(alias, value.trim());
    return;
  }
  const account = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const shop = account.shopId;
  if (typeof account.key !== 'string' || (shop !== undefined && typeof shop !== 'string' && typeof shop !== 'number'))
    throw new UserError(
      `${where}: the key of account ${alias} must be a non-empty string, or {"key": "...", "shopId": 885}`,
    );
  entries.add(alias, account.key.trim(), shop === undefined ? undefined : String(shop));
}

/** The key ring of an object `{alias: key}` (or `{alias: {key, shopId}}`) read from `where`. */
export function keyRingOfObject(object: Record<string, unknown>, where: string): KeyRing {
  const entries = new KeyRingEntries(where);
  for (const [alias, value] of Object.entries(object)) addFileEntry(entries, alias, value, where);
  return entries.keyRing();
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
  return keyRingOfObject(parsed as Record<string, unknown>, `keys file ${path}`);
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
  if (apiKeys !== undefined) return keyRingOfObject(apiKeys, 'apiKeys of the configuration');
  throw new UserError(
    `no API keys: set ${API_KEYS_ENV}=alias=key,..., give --keys-file FILE, or keysFile (apiKeys in a mode 600 file) in the configuration; keys never go on the command line`,
  );
}

/** The key ring, when every account names a shop where `carrier` asks for one; refused before any lookup otherwise. */
export function withAccountShops(keys: KeyRing, carrier: string): KeyRing {
  const known = findCarrier(carrier);
  const without = known?.accountShops ? keys.aliases.filter((alias) => keys.shopOf(alias) === undefined) : [];
  if (without.length > 0)
    throw new UserError(
      `account ${without.join(', ')} names no shop, which ${known!.name} asks beside the key: give alias:shop=key in ${API_KEYS_ENV}, or {"key": "...", "shopId": 885} in the keys file`,
    );
  return keys;
}
