import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeyRing } from '../carriers/client/key-ring.js';
import type { CallbackAuthMethod } from './callback-event.js';

/** Who a callback authenticated as; the alias of the key it carried, or null for HTTP Basic. */
export interface CallbackIdentity {
  readonly method: CallbackAuthMethod;
  readonly accountAlias: string | null;
}

/** What a callback may carry to prove who sent it. */
export interface CallbackCredentials {
  readonly authorization: string | undefined;
  /** The `token` of the address's query. */
  readonly urlToken: string | undefined;
  /** The key in the body's field the carrier sends it in (apikey only: the others are checked before the body is read). */
  readonly bodyKey: unknown;
}

/**
 * Checks a callback's credential: the key in its body (apikey), the request's Authorization header
 * (basic) or the token of the address it was sent to (token).
 */
export interface CallbackAuthenticator {
  readonly method: CallbackAuthMethod;
  /** The identity, or undefined when the credential is missing or wrong. */
  authenticate(credentials: CallbackCredentials): CallbackIdentity | undefined;
}

/**
 * Secrets are compared as SHA-256 digests with timingSafeEqual: fixed length, so neither the length
 * nor the first differing byte of a secret shows in the time taken.
 */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Accepts the key in the body when it is one of the partner's own keys (the carrier sends the
 * account's key back), and names that key's alias. Every key is compared, whichever matches.
 */
export function apiKeyAuthenticator(keys: KeyRing): CallbackAuthenticator {
  const expected = keys.aliases.map((alias) => ({ alias, digest: digest(keys.keyOf(alias)) }));
  return {
    method: 'apikey',
    authenticate({ bodyKey }) {
      if (typeof bodyKey !== 'string' || bodyKey === '') return undefined;
      const given = digest(bodyKey);
      let match: string | undefined;
      for (const key of expected) if (timingSafeEqual(given, key.digest) && match === undefined) match = key.alias;
      return match === undefined ? undefined : { method: 'apikey', accountAlias: match };
    },
  };
}

/** Accepts HTTP Basic with this user and password; user and password are both always compared. */
export function basicAuthenticator(user: string, password: string): CallbackAuthenticator {
  const expectedUser = digest(user);
  const expectedPassword = digest(password);
  return {
    method: 'basic',
    authenticate({ authorization }) {
      const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
      if (!match) return undefined;
      const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon === -1) return undefined;
      const userOk = timingSafeEqual(digest(decoded.slice(0, colon)), expectedUser);
      const passwordOk = timingSafeEqual(digest(decoded.slice(colon + 1)), expectedPassword);
      return userOk && passwordOk ? { method: 'basic', accountAlias: null } : undefined;
    },
  };
}

/**
 * Accepts a callback sent to an address whose query carries `token`, for a carrier that signs
 * nothing: the partner registers `https://…/path?token=SECRET` with it.
 */
export function urlTokenAuthenticator(token: string): CallbackAuthenticator {
  const expected = digest(token);
  return {
    method: 'token',
    authenticate({ urlToken }) {
      if (urlToken === undefined || urlToken === '') return undefined;
      return timingSafeEqual(digest(urlToken), expected) ? { method: 'token', accountAlias: null } : undefined;
    },
  };
}
