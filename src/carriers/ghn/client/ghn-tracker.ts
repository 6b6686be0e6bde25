import type { CarrierErrorEffect, CarrierTracker, TrackerAnswer } from '../../client/carrier-tracker.js';
import type { KeyRing } from '../../client/key-ring.js';
import type { GhnErrorKind } from '../answer-errors.js';
import { ghnFeesDue } from '../reference-data.js';
import { ghnTrackedAnswer } from '../tracked-answer.js';
import { type GhnAnswer, GhnClient, type GhnClientOptions } from './ghn-client.js';

function effectOf(kind: GhnErrorKind): CarrierErrorEffect {
  if (kind.stopsKey) return 'key_refused';
  return kind.transient ? 'retry' : 'final';
}

function errorAnswer(answer: Extract<GhnAnswer<unknown>, { kind: 'carrier_error' }>): TrackerAnswer {
  return {
    kind: 'carrier_error',
    errorCode: answer.errorKind.code,
    errorMessage: answer.error.message,
    effect: effectOf(answer.errorKind),
    body: answer.body,
  };
}

/**
 * GHN's order as a run asks it: its detail, then, once GHN charges it (from pick-up on), its actual
 * fees, which the detail does not hold: one lookup is then two calls. An account's token comes from the
 * key ring by its alias, with its shop. GHN answers errors with a text: the stored code is the
 * product's name of its kind. A fee call GHN refuses for the order alone (no fees yet) leaves the
 * order's fees unknown; one to be retried, or one refusing the shop, is the lookup's answer.
 */
export class GhnTracker implements CarrierTracker {
  private readonly client: GhnClient;

  constructor(
    options: GhnClientOptions,
    private readonly tokens: KeyRing,
  ) {
    this.client = new GhnClient(options, tokens);
  }

  async lookup(alias: string, orderCode: string, signal?: AbortSignal): Promise<TrackerAnswer> {
    const account = { token: this.tokens.keyOf(alias), shopId: this.tokens.shopOf(alias) ?? '' };
    const detail = await this.client.detail(account, orderCode, signal);
    if (detail.kind !== 'ok') return errorAnswer(detail);
    const order = detail.value.order_code;
    if (!ghnFeesDue(detail.value.status))
      return { kind: 'snapshot', orderCode: order, body: ghnTrackedAnswer(detail.body, null) };
    const fees = await this.client.fees(account, order, signal);
    if (fees.kind !== 'ok' && effectOf(fees.errorKind) !== 'final') return errorAnswer(fees);
    return { kind: 'snapshot', orderCode: order, body: ghnTrackedAnswer(detail.body, fees.body) };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
