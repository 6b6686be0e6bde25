import type { CarrierDefinition } from '../carrier-definition.js';
import type { TrackerAnswer } from '../carrier-tracking.js';
import { CarrierTransport, type TransportOptions } from './carrier-transport.js';
import type { KeyRing } from './key-ring.js';

/**
 * What a tracking run asks of a carrier, whatever the carrier: one order looked up with one account's
 * key, and what the answer means for the lookup. The run knows none of the carrier's fields.
 */
export interface CarrierTracker {
  /** One lookup with the key of `alias`; throws a LookupFailure when no usable answer came back. */
  lookup(alias: string, orderCode: string, signal?: AbortSignal): Promise<TrackerAnswer>;
  close(): Promise<void>;
}

/**
 * A carrier's lookup as its definition declares it, its requests sent over HTTP; the account's key
 * (and shop) from the key ring by its alias.
 */
export class DefinedCarrierTracker implements CarrierTracker {
  private readonly transport: CarrierTransport;

  constructor(
    private readonly carrier: CarrierDefinition,
    options: TransportOptions,
    private readonly keys: KeyRing,
  ) {
    this.transport = new CarrierTransport(options, keys);
  }

  lookup(alias: string, orderCode: string, signal?: AbortSignal): Promise<TrackerAnswer> {
    return this.carrier.tracking.lookup(this.keys.accountOf(alias), orderCode, this.transport.call(signal));
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
