/**
 * The accounts' keys as a shop gives them: `alias=key` or `alias:shop=key` in the variable, a key or
 * `{key, shopId}` per alias in a file; a carrier that asks for a shop refuses an account without one.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  keyRingOfObject,
  parseApiKeysVariable,
  readKeysFile,
  withAccountShops,
} from '../../src/cli/api-keys-config.js';

describe('API keys with shops', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-keys-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads an account's shop from the variable, beside accounts without one", () => {
    const keys = parseApiKeysVariable('hn:885=token-a, hcm=token-b');
    expect(keys.aliases).toEqual(['hn', 'hcm']);
    expect(keys.keyOf('hn')).toBe('token-a');
    expect(keys.shopOf('hn')).toBe('885');
    expect(keys.shopOf('hcm')).toBeUndefined();
  });

  it('reads {key, shopId} from a keys file, and plain keys', async () => {
    const file = join(dir, 'keys.json');
    await writeFile(file, JSON.stringify({ hn: { key: 'token-a', shopId: 885 }, old: 'token-c' }));
    await chmod(file, 0o600);
    const keys = await readKeysFile(file);
    expect([keys.shopOf('hn'), keys.keyOf('hn'), keys.keyOf('old'), keys.shopOf('old')]).toEqual([
      '885',
      'token-a',
      'token-c',
      undefined,
    ]);
  });

  it('refuses a shop that is not digits, and a malformed account, naming the alias and never the key', () => {
    expect(() => parseApiKeysVariable('hn:88a=secret-token')).toThrow(/shop of account hn must be digits/);
    expect(() => keyRingOfObject({ hn: { shopId: 885 } }, 'keys file k.json')).toThrow(
      /keys file k.json: the key of account hn must be/,
    );
    try {
      parseApiKeysVariable('hn:x=secret-token');
    } catch (error) {
      expect(String(error)).not.toContain('secret-token');
    }
  });

  it('refuses, for a carrier that asks for shops, the accounts without one', () => {
    const keys = parseApiKeysVariable('hn:885=a,hcm=b,dn=c');
    expect(withAccountShops(keys, '247express')).toBe(keys);
    expect(() => withAccountShops(keys, 'ghn')).toThrow(/account hcm, dn names no shop, which GHN asks/);
  });
});
