import type { ParsedCallback } from '../carriers/carrier-callbacks.js';
import type { CarrierInstant } from '../carriers/carrier-time.js';

export type CallbackAuthMethod = 'apikey' | 'basic' | 'token';

/**
 * One accepted callback as the journal keeps it and `callback_events` loads it: its carrier, the
 * fields its carrier's parser read, who it authenticated as, and the body as it came minus the
 * credential it carried. A record the previous release wrote has no `carrier` and no `failedAttempt`.
 */
export interface CallbackEventRecord extends ParsedCallback {
  readonly carrier: string;
  readonly accountAlias: string | null;
  readonly authMethod: CallbackAuthMethod;
  readonly receivedAt: CarrierInstant;
  readonly body: Record<string, unknown>;
}

/** The journal record of a parsed callback; `body` is as received, less its `credentialField`. */
export function callbackEventRecord(
  carrier: string,
  parsed: ParsedCallback,
  received: { readonly body: Record<string, unknown>; readonly credentialField: string | undefined },
  auth: { readonly method: CallbackAuthMethod; readonly accountAlias: string | null },
  receivedAt: CarrierInstant,
): CallbackEventRecord {
  const body = { ...received.body };
  if (received.credentialField !== undefined) delete body[received.credentialField];
  return { carrier, ...parsed, accountAlias: auth.accountAlias, authMethod: auth.method, receivedAt, body };
}
