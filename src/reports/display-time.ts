import { hasFourDigitYear } from '../carriers/carrier-time.js';
import { sqlText, timestampLiteral } from '../warehouse/sql-literals.js';

/** The time zone reports and messages show times in unless set otherwise: the carrier's. */
export const DEFAULT_DISPLAY_TIME_ZONE = 'Asia/Ho_Chi_Minh';

/** Whether `zone` is an IANA time zone name the runtime knows (`Asia/Ho_Chi_Minh`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let format = zoneFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
    zoneFormats.set(zone, format);
  }
  return format;
}

/** The zone's offset from UTC at an instant, in minutes east. */
function offsetMinutesAt(epochMs: number, zone: string): number {
  const name = zoneFormat(zone)
    .formatToParts(epochMs)
    .find((p) => p.type === 'timeZoneName')?.value;
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name ?? '');
  return m === null ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

/** `+07:00` for 420 minutes. */
function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** An instant as the reports and messages show it: the zone's wall time to the second, with its offset (`2026-11-20T08:15:30+07:00`). */
export function formatDisplayTime(epochMs: number, zone: string): string {
  return wallTimeText(epochMs, offsetMinutesAt(epochMs, zone));
}

function wallTimeText(epochMs: number, offsetMinutes: number): string {
  const wall = new Date(Math.floor(epochMs / 1000) * 1000 + offsetMinutes * 60_000).toISOString();
  return `${wall.slice(0, 19)}${offsetText(offsetMinutes)}`;
}

/**
 * A DuckDB instant (microseconds since the epoch) as formatDisplayTime shows it, with the fraction of
 * its second when it has one (`2026-11-20T08:15:30.25+07:00`); undefined for one whose wall time has
 * no four-digit year (infinity among them), which the caller shows as DuckDB does.
 */
export function formatDisplayMicros(micros: bigint, zone: string): string | undefined {
  const fraction = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const epochMs = Number((micros - fraction) / 1000n);
  if (!hasFourDigitYear(epochMs)) return undefined;
  const offset = offsetMinutesAt(epochMs, zone);
  if (!hasFourDigitYear(epochMs + offset * 60_000)) return undefined;
  const text = wallTimeText(epochMs, offset);
  if (fraction === 0n) return text;
  return `${text.slice(0, 19)}.${String(fraction).padStart(6, '0').replace(/0+$/, '')}${text.slice(19)}`;
}

/** A span of instants (epoch ms, the end excluded) over which a zone keeps one offset. */
interface FixedOffsetSpan {
  readonly from: number;
  readonly until: number;
  readonly minutes: number;
}

const MONTH_MS = 30 * 86_400_000;
const SPAN_FIRST = Date.UTC(1970, 0, 1);
const SPAN_LAST = Date.UTC(2100, 0, 1);
const spans = new Map<string, FixedOffsetSpan>();

/**
 * The stretch around the present, sampled a month apart, over which the zone keeps the offset it has
 * now: the carrier's zone has kept +07:00 since 1975, a zone with daylight saving keeps its offset a
 * few months. Within it a time is shifted by a constant, which costs DuckDB far less than a zone lookup.
 */
function fixedOffsetSpan(zone: string): FixedOffsetSpan {
  const known = spans.get(zone);
  if (known !== undefined) return known;
  const now = Date.now();
  const minutes = offsetMinutesAt(now, zone);
  let from = now;
  while (from - MONTH_MS >= SPAN_FIRST && offsetMinutesAt(from - MONTH_MS, zone) === minutes) from -= MONTH_MS;
  let until = now;
  while (until + MONTH_MS <= SPAN_LAST && offsetMinutesAt(until + MONTH_MS, zone) === minutes) until += MONTH_MS;
  const span = { from, until, minutes };
  spans.set(zone, span);
  return span;
}

/** SQL: whether a TIMESTAMPTZ expression lies in the zone's fixed-offset span. */
function inFixedSpan(expression: string, span: FixedOffsetSpan): string {
  return `${expression} >= ${timestampLiteral(span.from)} AND ${expression} < ${timestampLiteral(span.until)}`;
}

const SECONDS_FORMAT = `'%Y-%m-%dT%H:%M:%S'`;

/**
 * SQL: a TIMESTAMPTZ expression as text in the zone with its offset, to the second
 * (`2026-11-20T08:15:30+07:00`), whatever the connection's time zone. Within the zone's fixed-offset
 * span the time is shifted by a constant; elsewhere DuckDB looks the zone up. Infinite times keep
 * DuckDB's spelling; null stays null.
 */
export function displayTimeSql(expression: string, zone: string): string {
  const span = fixedOffsetSpan(zone);
  const fixed = `strftime(make_timestamp(epoch_us(${expression}) + ${span.minutes * 60_000_000}), ${SECONDS_FORMAT}) || '${offsetText(span.minutes)}'`;
  const local = `timezone(${sqlText(zone)}, ${expression})`;
  const offsetMinutes = `((epoch_us(${local}) - epoch_us(${expression})) // 60000000)`;
  const lookedUp = `strftime(${local}, ${SECONDS_FORMAT}) || CASE WHEN ${offsetMinutes} < 0 THEN '-' ELSE '+' END
      || lpad(CAST(abs(${offsetMinutes}) // 60 AS VARCHAR), 2, '0') || ':' || lpad(CAST(abs(${offsetMinutes}) % 60 AS VARCHAR), 2, '0')`;
  return `CASE WHEN ${inFixedSpan(expression, span)} THEN ${fixed} WHEN isfinite(${expression}) THEN ${lookedUp} ELSE CAST(${expression} AS VARCHAR) END`;
}

/**
 * SQL: the epoch milliseconds of a TIMESTAMPTZ expression's wall time in the zone, as a DOUBLE: what a
 * spreadsheet's date cell holds (its dates have no zone).
 */
export function displayWallTimeMsSql(expression: string, zone: string): string {
  const span = fixedOffsetSpan(zone);
  return `CAST(CASE WHEN ${inFixedSpan(expression, span)} THEN epoch_ms(${expression}) + ${span.minutes * 60_000}
                   ELSE epoch_ms(timezone(${sqlText(zone)}, ${expression})) END AS DOUBLE)`;
}
