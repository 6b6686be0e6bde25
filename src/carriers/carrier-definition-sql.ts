import type { CarrierDefinition } from './carrier-definition.js';
import { KNOWN_CARRIERS } from './known-carriers.js';
import type { NeutralStatus } from './neutral-status.js';

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * SQL: true where a row's code (a status, a service id) is one of `codesOf` its own carrier (from
 * each carrier's definition). The codes of all carriers together come first, a cheap filter that
 * leaves the carrier's own to the rows it keeps.
 */
function carrierCodeIn(
  codesOf: (carrier: CarrierDefinition) => readonly string[],
  code: string,
  carrier: string,
): string {
  const ofCarriers = KNOWN_CARRIERS.map((known) => ({ id: known.id, codes: codesOf(known).map(quoted) })).filter(
    ({ codes }) => codes.length > 0,
  );
  if (ofCarriers.length === 0) return 'false';
  const any = [...new Set(ofCarriers.flatMap(({ codes }) => codes))];
  const own = ofCarriers.map(({ id, codes }) => `(${carrier} = ${quoted(id)} AND ${code} IN (${codes.join(', ')}))`);
  return `(${code} IN (${any.join(', ')}) AND (${own.join(' OR ')}))`;
}

/** SQL: true where a row's status, a code of its own carrier's, is one of the `neutrals`. */
export function neutralStatusIn(neutrals: readonly NeutralStatus[], status = 'status', carrier = 'carrier'): string {
  return carrierCodeIn(
    (known) => known.statuses.filter((s) => neutrals.includes(s.neutral)).map((s) => s.code),
    status,
    carrier,
  );
}

/** SQL: true where a row's status is a failed delivery attempt of its own carrier's. */
export function failedAttemptStatusIn(status = 'status', carrier = 'carrier'): string {
  return carrierCodeIn((known) => known.failedAttemptStatuses, status, carrier);
}

/** SQL: true where a charge line is its own carrier's far-region line (`CarrierCharges.farRegionServiceId`). */
export function farRegionLineIn(serviceId = 'service_id', carrier = 'carrier'): string {
  return carrierCodeIn(
    ({ charges }) => (charges.farRegionServiceId === undefined ? [] : [charges.farRegionServiceId]),
    serviceId,
    carrier,
  );
}

/**
 * SQL: true where a stored callback, of its own carrier, asks for the order to be looked up again
 * (`CarrierCallbacks.asksLookup`): its fees, COD or weights changed after the carrier sent it.
 */
export function callbackAsksLookup(carrier = 'carrier', body = 'body'): string {
  const own = KNOWN_CARRIERS.flatMap((known) => {
    const asks = known.callbacks?.asksLookup;
    return asks === undefined ? [] : [`(${carrier} = ${quoted(known.id)} AND ${asks(body)})`];
  });
  return own.length === 0 ? 'false' : `(${own.join(' OR ')})`;
}

/** SQL: the error codes, of every known carrier, saying the carrier knows no such order for the account. */
export function unknownOrderErrorCodes(): string {
  return `(${KNOWN_CARRIERS.flatMap((known) => known.unknownOrderErrorCodes)
    .map(quoted)
    .join(', ')})`;
}
