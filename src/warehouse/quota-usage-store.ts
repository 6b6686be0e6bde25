import type { CarrierInstant } from '../carriers/carrier-time.js';
import { countOf, instantText } from './result-values.js';
import type { SqlRunner, WarehouseSession } from './warehouse.js';

/*
 * The ledger is kept per carrier: each carrier's keys and quota are its own. Every function takes the
 * carrier whose ledger it reads or writes.
 */

/** The key_alias of the row that totals every key's lookups of a carrier day. */
export const ALL_KEYS_ALIAS = '*';

/** A key's lookups of a day and the day's total over all keys, after a change. */
export interface QuotaCounts {
  readonly key: number;
  readonly total: number;
}

/** Lookups spent on a carrier day (YYYY-MM-DD): alias → lookups, with ALL_KEYS_ALIAS for the total. */
export async function readQuotaUsage(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
): Promise<Map<string, number>> {
  const reader = await warehouse.readAll(
    'SELECT key_alias, lookups FROM quota_usage WHERE carrier = $carrier AND carrier_day = $day::DATE',
    { carrier, day },
  );
  return new Map(reader.getRowObjectsJS().map((row) => [row.key_alias as string, countOf(row.lookups)]));
}

/**
 * Adds `lookups` to the key's count and to the day's total, together: one transaction (a reservation
 * is on the path of every lookup it covers).
 */
export async function addQuotaUsage(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
  alias: string,
  lookups: number,
): Promise<QuotaCounts> {
  checkLookups('lookups', lookups);
  checkKeyAlias(alias);
  return warehouse.transaction((sql) => addToKeyAndTotal(sql, carrier, day, alias, lookups));
}

/**
 * Adds `delta` to the rows of the key and of the total for the day, creating the ones not there yet;
 * returns both counts after. Run in a transaction. The rows are there for every reservation but a
 * key's first of the day, and an UPDATE costs DuckDB about half what its upsert (ON CONFLICT DO
 * UPDATE) does.
 */
async function addToKeyAndTotal(
  sql: SqlRunner,
  carrier: string,
  day: string,
  alias: string,
  delta: number,
): Promise<QuotaCounts> {
  const parameters = { carrier, day, alias, total: ALL_KEYS_ALIAS, delta: BigInt(delta) };
  const updated = await sql.readAll(
    `UPDATE quota_usage SET lookups = lookups + $delta, updated_at = current_timestamp
     WHERE carrier = $carrier AND carrier_day = $day::DATE AND key_alias IN ($alias, $total)
     RETURNING key_alias, lookups`,
    parameters,
  );
  const rows = updated.getRowObjectsJS();
  if (rows.length < 2) {
    // The one row updated, if any, is not inserted again.
    const inserted = await sql.readAll(
      `INSERT INTO quota_usage
       SELECT $carrier, $day::DATE, key_alias, $delta, current_timestamp FROM unnest([$alias, $total]) AS t(key_alias)
       WHERE key_alias IS DISTINCT FROM $updated::VARCHAR
       RETURNING key_alias, lookups`,
      { ...parameters, updated: rows.length === 0 ? null : String(rows[0]?.key_alias) },
    );
    rows.push(...inserted.getRowObjectsJS());
  }
  return countsOf(rows, alias);
}

/**
 * Records that the carrier answered APIKEY_LIMIT for the key on the day, at its first such answer, in
 * `quota_limit_answers`: the key's count in `quota_usage` stays what was sent.
 */
export async function reportQuotaLimit(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
  alias: string,
): Promise<void> {
  checkKeyAlias(alias);
  await warehouse.run(
    `INSERT INTO quota_limit_answers VALUES ($carrier, $day::DATE, $alias, current_timestamp) ON CONFLICT DO NOTHING`,
    { carrier, day, alias },
  );
}

/** The keys the carrier answered APIKEY_LIMIT for on a carrier day, and when it first did. */
export async function readQuotaLimitReports(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
): Promise<Map<string, CarrierInstant>> {
  const reader = await warehouse.readAll(
    `SELECT key_alias, ${instantText('answered_at')} AS answered_at FROM quota_limit_answers
     WHERE carrier = $carrier AND carrier_day = $day::DATE ORDER BY key_alias`,
    { carrier, day },
  );
  return new Map(reader.getRowObjectsJS().map((row) => [row.key_alias as string, row.answered_at as CarrierInstant]));
}

/** Sets the key's count to exactly `lookups` (e.g. giving back an over-reservation), the total by the difference. */
export async function setQuotaUsage(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
  alias: string,
  lookups: number,
): Promise<QuotaCounts> {
  checkLookups('lookups', lookups);
  return changeKeyUsage(warehouse, carrier, day, alias, (current) => lookups - current);
}

/** In one transaction: reads the key's count, adds `deltaOf(count)` to the key row and the total row (creating them), reads both back. */
async function changeKeyUsage(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
  alias: string,
  deltaOf: (current: number) => number,
): Promise<QuotaCounts> {
  checkKeyAlias(alias);
  return warehouse.transaction(async (sql) => {
    const before = await sql.readAll(
      'SELECT lookups FROM quota_usage WHERE carrier = $carrier AND carrier_day = $day::DATE AND key_alias = $alias',
      { carrier, day, alias },
    );
    return addToKeyAndTotal(sql, carrier, day, alias, deltaOf(countOf(before.getRowObjectsJS()[0]?.lookups)));
  });
}

function countsOf(rows: Record<string, unknown>[], alias: string): QuotaCounts {
  const counts = new Map(rows.map((row) => [row.key_alias as string, countOf(row.lookups)]));
  return { key: counts.get(alias) ?? 0, total: counts.get(ALL_KEYS_ALIAS) ?? 0 };
}

function checkKeyAlias(alias: string): void {
  if (alias === ALL_KEYS_ALIAS)
    throw new RangeError(`quota usage: '${ALL_KEYS_ALIAS}' is the total of the keys, not a key alias`);
}

/**
 * Raises each row of the day (a key alias, or ALL_KEYS_ALIAS) to at least the given count, each on its
 * own: counts seen in a ledger other processes share, where the total is more than this warehouse's keys.
 */
export async function raiseQuotaUsageRows(
  warehouse: WarehouseSession,
  carrier: string,
  day: string,
  counts: ReadonlyMap<string, number>,
): Promise<void> {
  for (const [alias, lookups] of counts) {
    checkLookups('lookups', lookups);
    await warehouse.run(
      `INSERT INTO quota_usage VALUES ($carrier, $day::DATE, $alias, $lookups, current_timestamp)
       ON CONFLICT (carrier, carrier_day, key_alias) DO UPDATE SET lookups = greatest(quota_usage.lookups, excluded.lookups), updated_at = excluded.updated_at`,
      { carrier, day, alias, lookups: BigInt(lookups) },
    );
  }
}

function checkLookups(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`quota usage: ${name} must be a whole number of lookups >= 0, got ${value}`);
}
