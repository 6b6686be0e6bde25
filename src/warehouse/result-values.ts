/**
 * SQL that reads a TIMESTAMPTZ column back as a contract instant (`2026-11-11T04:43:07.000000Z`):
 * exact to the microsecond, where the client's JS conversion would give a millisecond Date. Relies on
 * the connection's time zone being UTC, which Warehouse.open sets.
 */
export function instantText(column: string): string {
  return `strftime(${column}, '%Y-%m-%dT%H:%M:%S.%fZ')`;
}

/** Counts come back as BIGINT, which the client hands over as bigint. */
export function countOf(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}
