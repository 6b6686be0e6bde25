import { EXPRESS_247 } from '../../carriers/247express/carrier.js';
import { ExpressTracker } from '../../carriers/247express/client/express-tracker.js';
import type { CarrierTracker } from '../../carriers/client/carrier-tracker.js';
import type { KeyRing } from '../../carriers/client/key-ring.js';
import { GHN } from '../../carriers/ghn/carrier.js';
import { GhnTracker } from '../../carriers/ghn/client/ghn-tracker.js';

/** How a run reaches its carrier, whichever it is. */
export interface TrackerOptions {
  /** The carrier's tracking address: 247Express's `{tracking_url}`, GHN's base address (`…/shiip/public-api`). */
  readonly trackingUrl: string;
  /** Time allowed for one request, headers and body. */
  readonly timeoutMs: number;
  /** The largest answer body read. */
  readonly maxAnswerBytes: number;
  /** Keep-alive connections to the carrier. */
  readonly connections: number;
}

/** The tracker of a run's carrier, with the accounts' keys (GHN's tokens and shops) of the key ring. */
export function carrierTracker(carrier: string, options: TrackerOptions, keys: KeyRing): CarrierTracker {
  switch (carrier) {
    case EXPRESS_247.id:
      return new ExpressTracker(options, keys);
    case GHN.id:
      return new GhnTracker({ ...options, baseUrl: options.trackingUrl }, keys);
    default:
      throw new RangeError(`no tracker for carrier ${carrier}`);
  }
}
