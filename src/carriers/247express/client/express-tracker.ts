import type { CarrierErrorEffect, CarrierTracker, TrackerAnswer } from '../../client/carrier-tracker.js';
import type { KeyRing } from '../../client/key-ring.js';
import { findTrackingErrorCode, TRACKING_ERROR } from '../reference-data.js';
import { TrackingClient, type TrackingClientOptions } from './tracking-client.js';

/** What each of 247Express's error codes does to a lookup. */
function effectOf(errorCode: string): CarrierErrorEffect {
  if (errorCode === TRACKING_ERROR.APIKEY_LIMIT) return 'key_limit';
  // Every lookup with this key would get the same answer.
  if (errorCode === TRACKING_ERROR.APIKEY_NOT_FOUND) return 'key_refused';
  return findTrackingErrorCode(errorCode)?.transient ? 'retry' : 'final';
}

/** 247Express's tracking lookup as a run asks it: the key by its account's alias. */
export class ExpressTracker implements CarrierTracker {
  private readonly client: TrackingClient;

  constructor(
    options: TrackingClientOptions,
    private readonly keys: KeyRing,
  ) {
    this.client = new TrackingClient(options, keys);
  }

  async lookup(alias: string, orderCode: string, signal?: AbortSignal): Promise<TrackerAnswer> {
    const answer = await this.client.lookup(this.keys.keyOf(alias), orderCode, signal);
    if (answer.kind === 'snapshot')
      return { kind: 'snapshot', orderCode: answer.snapshot.orderCode, body: answer.body };
    const { errorCode, errorMessage } = answer.error;
    return { kind: 'carrier_error', errorCode, errorMessage, effect: effectOf(errorCode), body: answer.body };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
