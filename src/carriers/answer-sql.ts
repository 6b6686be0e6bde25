/**
 * SQL over a carrier's answers as DuckDB reads them from the answer log: the structure its JSON is
 * read as, and what turns its values into the warehouse's types with the contract's meaning (money into
 * DECIMAL(20,4), date-times into TIMESTAMPTZ). The loaders read the answers in DuckDB, after the
 * contract has accepted them in JavaScript.
 */

/**
 * How json_transform reads a line: a SQL type name for a value, an object of fields, or a one-item
 * array for a list of that item.
 */
export type JsonStructure = string | { readonly [field: string]: JsonStructure } | readonly [JsonStructure];
export type JsonFields = { readonly [field: string]: JsonStructure };

/**
 * The exact DECIMAL(20,4) of a money text column. DuckDB parses text into a DECIMAL wider than
 * 18 digits (a 128-bit integer) far more slowly than into DECIMAL(18,4), enough to dominate a load,
 * so amounts that fit 18 digits take the fast path. `text` must be a plain column: over a struct
 * field DuckDB evaluates both branches of the coalesce.
 */
export function moneyDecimal(text: string): string {
  return `coalesce(try_cast(${text} AS DECIMAL(18,4)), CAST(${text} AS DECIMAL(20,4)))`;
}

/** parseCarrierInstant's grammar (carrier-time.ts), for the forms other than the tracking result's own. */
const CARRIER_DATE_TIME_PATTERN = String.raw`^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,7}))?)?\s*([Zz]|[+-]\d{2}:?\d{2})?$`;

/**
 * The TIMESTAMPTZ of a carrier date-time text, as parseCarrierInstant reads it: an offset or `Z`, or
 * else carrier-local time (UTC+07:00); up to 7 fractional digits, the seventh dropped. The tracking
 * result's own form (`2019-08-07T11:24:12+07:00`) is a plain cast; the others go through the grammar.
 * Only for text the contract has accepted: an impossible date fails the statement.
 */
export function carrierInstant(text: string): string {
  const part = (group: number) => `regexp_extract(trim(${text}), '${CARRIER_DATE_TIME_PATTERN}', ${group})`;
  const offset = part(8);
  const offsetMinutes = `CASE WHEN ${offset} = '' THEN 420 WHEN upper(${offset}) = 'Z' THEN 0
      ELSE (CASE WHEN ${offset}[1] = '-' THEN -1 ELSE 1 END)
           * (CAST(${offset}[2:3] AS INTEGER) * 60 + CAST(right(replace(${offset}, ':', ''), 2) AS INTEGER)) END`;
  const local = `make_timestamp(CAST(${part(1)} AS BIGINT), CAST(${part(2)} AS BIGINT), CAST(${part(3)} AS BIGINT),
      CAST(${part(4)} AS BIGINT), CAST(${part(5)} AS BIGINT), CAST(coalesce(nullif(${part(6)}, ''), '0') AS DOUBLE))
      + to_microseconds(CAST(rpad(left(${part(7)}, 6), 6, '0') AS BIGINT))`;
  return `CASE
      WHEN length(${text}) = 25 AND ${text}[11] = 'T' AND ends_with(${text}, '+07:00') THEN CAST(${text} AS TIMESTAMPTZ)
      ELSE timezone('UTC', ${local} - to_minutes(${offsetMinutes}))
    END`;
}
