import { inspect } from 'node:util';
import type { CarrierAccount } from '../carrier-tracking.js';

/** What stands where a key was in text from the carrier. */
const REDACTED_KEY = '[redacted]';

/**
 * The partner's API keys by account alias. Keys stay inside: printing, logging or serializing a
 * KeyRing shows only the aliases, so a key cannot leak through a log line or an error by accident.
 */
export class KeyRing {
  private readonly keys: ReadonlyMap<string, string>;
  /** The distinct keys, longest first, so a key inside another is never cleared before the longer one. */
  private readonly longestFirst: readonly string[];

  constructor(
    entries: Iterable<readonly [alias: string, apiKey: string]>,
    /** Each account's shop at the carrier, where the carrier asks for one beside the key (GHN's ShopId). */
    private readonly shops: ReadonlyMap<string, string> = new Map(),
  ) {
    this.keys = new Map(entries);
    this.longestFirst = [...new Set(this.keys.values())]
      .filter((key) => key !== '')
      .sort((a, b) => b.length - a.length);
  }

  get aliases(): string[] {
    return [...this.keys.keys()];
  }

  get size(): number {
    return this.keys.size;
  }

  has(alias: string): boolean {
    return this.keys.has(alias);
  }

  /** The key of an alias; only the HTTP client and the callback receiver ask for it. */
  keyOf(alias: string): string {
    const key = this.keys.get(alias);
    if (key === undefined) throw new RangeError(`no API key for account ${alias}`);
    return key;
  }

  /** The shop of an alias, where one is given; not a secret. */
  shopOf(alias: string): string | undefined {
    return this.shops.get(alias);
  }

  /** The account of an alias as a carrier's contract code is given it: its key and its shop. */
  accountOf(alias: string): CarrierAccount {
    return { key: this.keyOf(alias), shop: this.shopOf(alias) };
  }

  /** The alias whose key this is, or undefined. */
  aliasOf(apiKey: string): string | undefined {
    for (const [alias, key] of this.keys) if (key === apiKey) return alias;
    return undefined;
  }

  /**
   * The text with every key in it replaced by [redacted]: a carrier may quote a key back in an error
   * message, and nothing it says is kept, logged or printed with the key in it. The same string when
   * it holds no key.
   */
  redact(text: string): string {
    let redacted = text;
    for (const key of this.longestFirst) if (redacted.includes(key)) redacted = redacted.replaceAll(key, REDACTED_KEY);
    return redacted;
  }

  /**
   * The alias an order is looked up with: its `account` column when given, else the only key, else
   * the key called `default`. Undefined when none fits.
   */
  aliasFor(account: string | null): string | undefined {
    if (account !== null) return this.keys.has(account) ? account : undefined;
    if (this.keys.size === 1) return this.aliases[0];
    return this.keys.has('default') ? 'default' : undefined;
  }

  toJSON(): { aliases: string[] } {
    return { aliases: this.aliases };
  }

  toString(): string {
    return `KeyRing(${this.aliases.join(', ')})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
