import type { CarrierErrorEffect, CarrierTracker, TrackerAnswer } from '../../client/carrier-tracker.js';
import type { KeyRing } from '../../client/key-ring.js';
import type { GhnErrorKind } from '../answer-errors.js';
import { GhnClient, type GhnClientOptions } from './ghn-client.js';

function effectOf(kind: GhnErrorKind): CarrierErrorEffect {
  if (kind.stopsKey) return 'key_refused';
  return kind.transient ? 'retry' : 'final';
}

/**
 * GHN's order detail as a run asks it: an account's token from the key ring by its alias, and its
 * shop id. GHN answers errors with a text: the stored code is the product's name of its kind.
 */
export class GhnTracker implements CarrierTracker {
  private readonly client: GhnClient;

  constructor(
    options: GhnClientOptions,
    private readonly tokens: KeyRing,
    /** Each account's shop id, by alias. */
    private readonly shops: ReadonlyMap<string, string>,
  ) {
    this.client = new GhnClient(options, tokens);
  }

  async lookup(alias: string, orderCode: string, signal?: AbortSignal): Promise<TrackerAnswer> {
    const account = { token: this.tokens.keyOf(alias), shopId: this.shops.get(alias) ?? '' };
    const answer = await this.client.detail(account, orderCode, signal);
    if (answer.kind === 'ok') return { kind: 'snapshot', orderCode: answer.value.order_code, body: answer.body };
    return {
      kind: 'carrier_error',
      errorCode: answer.errorKind.code,
      errorMessage: answer.error.message,
      effect: effectOf(answer.errorKind),
      body: answer.body,
    };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
