import { EXPRESS_247 } from './247express/carrier.js';
import type { CarrierDefinition } from './carrier-definition.js';
import { GHN } from './ghn/carrier.js';

/** Every carrier the product knows: one line per carrier. */
export const KNOWN_CARRIERS: readonly CarrierDefinition[] = [EXPRESS_247, GHN];

/** The carrier of a row that names none: what a warehouse held before it knew carriers. */
export const DEFAULT_CARRIER_ID = EXPRESS_247.id;

export function findCarrier(id: string): CarrierDefinition | undefined {
  return KNOWN_CARRIERS.find((carrier) => carrier.id === id);
}

/** Every known carrier's settling error codes: the carriers' codes are distinct, so one list serves all. */
export const SETTLING_ERROR_CODES: readonly string[] = KNOWN_CARRIERS.flatMap((carrier) => carrier.settlingErrorCodes);
