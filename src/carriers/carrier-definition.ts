import type { CarrierCallbacks } from './carrier-callbacks.js';
import type { CarrierOrderImages } from './carrier-order-images.js';
import type { CarrierPriceQuotes } from './carrier-price-quotes.js';
import type { CarrierTracking } from './carrier-tracking.js';
import type { ChargeCheckName } from './charge-check-names.js';
import type { NeutralStatus } from './neutral-status.js';
import type { SnapshotMapping } from './snapshot-mapping.js';
import type { StatementTemplate } from './statement-layout.js';

/** A carrier's own status, with the neutral status it is. */
export interface CarrierStatus {
  readonly code: string;
  readonly name: string;
  /** As the carrier shows it to people (Vietnamese). */
  readonly displayName: string;
  readonly meaning: string;
  /** No further status change is expected. */
  readonly terminal: boolean;
  readonly neutral: NeutralStatus;
}

/** A carrier's reason for a failed delivery attempt. */
export interface CarrierDelayReason {
  readonly code: string;
  readonly meaning: string;
  /** As the carrier's courier writes it; null where the carrier publishes none. */
  readonly note: string | null;
}

/** A handling step a carrier reports between statuses. */
export interface CarrierTrackingStep {
  readonly code: string;
  readonly name: string;
  readonly displayName: string;
}

/** How the charge checks read a carrier's charges. */
export interface CarrierCharges {
  /** Cubic centimetres per kilogram of converted weight, as the carrier publishes it. */
  readonly volumetricDivisor: number;
  /** The checks its answers allow: those that compare what it gives, and no check of a field it lacks. */
  readonly checks: readonly ChargeCheckName[];
  /**
   * The shares of its published price relations, where it publishes them (decimal texts such as
   * `0.2`): what the fuel, VAT and quote checks compare with unless a report is given its own.
   */
  readonly publishedShares?: { readonly fuel: string; readonly vat: string };
  /** The service id of its far-region charge line, where it bills one: what the far-region fee is compared with. */
  readonly farRegionServiceId?: string;
}

/**
 * What the product knows of one carrier, declared in the carrier's own folder and registered once in
 * known-carriers.ts. Its `id` is the `carrier` value of every warehouse row and source row.
 */
export interface CarrierDefinition {
  /** Lower case, stable: stored in the warehouse and written in sources, settings and reports. */
  readonly id: string;
  /** As the carrier writes its own name. */
  readonly name: string;
  readonly statuses: readonly CarrierStatus[];
  readonly delayReasons: readonly CarrierDelayReason[];
  readonly trackingSteps: readonly CarrierTrackingStep[];
  /**
   * The carrier gives its order codes in rising order of creation, so an order accepted later never has
   * a smaller code: a report may then bound the codes of a date range by those of its first and last
   * orders before it reads their dates.
   */
  readonly risingOrderCodes: boolean;
  /**
   * Its error codes (or the product's names of its error answers) that settle an order's lookup: an
   * answer about the order itself, the same whatever key asks or when.
   */
  readonly settlingErrorCodes: readonly string[];
  /** Its error codes saying it knows no such order for the account: reconcile's orders unknown to the carrier. */
  readonly unknownOrderErrorCodes: readonly string[];
  /**
   * The code its rule gives a code it would refuse (too short, too long, a character it never uses),
   * undefined for one it may know: such a row is rejected before any lookup.
   */
  readonly checkOrderCode: (code: string) => string | undefined;
  /**
   * Its statuses that are a failed delivery attempt (a `delivery_failures` row), in a tracking
   * answer's history or a callback's status change; a hold after failed attempts is not one.
   */
  readonly failedAttemptStatuses: readonly string[];
  /** How it looks one order up: its requests and what their answers mean. */
  readonly tracking: CarrierTracking;
  /** How the loader reads its tracking answers into the warehouse's order columns. */
  readonly snapshotMapping: SnapshotMapping;
  readonly charges: CarrierCharges;
  /**
   * The calls one lookup makes at most (GHN's detail, then its fees): the quota settings count calls,
   * and a run of the carrier counts lookups, each this many of them.
   */
  readonly callsPerLookup: number;
  /** Its limits of calls: what a run keeps to where the quota settings leave them unset. */
  readonly quota: CarrierQuota;
  /** Each account names its shop beside its key (GHN's ShopId), given with the key, never on the command line. */
  readonly accountShops: boolean;
  /** The template its payout statements are read with, when the product reads them: `payouts import --carrier`. */
  readonly statementTemplate?: StatementTemplate;
  /** Its status callbacks (webhooks), when it sends any: `callbacks serve` receives them on their path. */
  readonly callbacks?: CarrierCallbacks;
  /** Its price calculation, when it offers one: `price` asks it. */
  readonly priceQuotes?: CarrierPriceQuotes;
  /** Its list of an order's images, when it offers one: `images` asks it. */
  readonly orderImages?: CarrierOrderImages;
}

/** A carrier's limits of calls, counted as the quota settings count them. */
export interface CarrierQuota {
  /** Calls one key may make per carrier day. */
  readonly callsPerKeyPerDay: number;
  /** Calls all keys together may make per carrier day. */
  readonly callsPerDay: number;
  /** Calls started per second over all keys; absent, no cap but the concurrency. */
  readonly callsPerSecond?: number;
  /** The carrier documents these limits; otherwise they are the product's cautious choice. */
  readonly documented: boolean;
}

/** The neutral status of a carrier's status code; a code the carrier's tables do not hold is `unknown`. */
export function neutralStatusOf(carrier: CarrierDefinition, code: string): NeutralStatus {
  return carrier.statuses.find((status) => status.code === code)?.neutral ?? 'unknown';
}
