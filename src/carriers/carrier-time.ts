/**
 * Vietnam's carriers keep Vietnam's time: a date-time without an offset, and a carrier's quota day,
 * are UTC+07:00.
 */
export const CARRIER_UTC_OFFSET_MINUTES = 7 * 60;

/**
 * An instant as the contract hands it on: UTC, always six fractional digits, e.g.
 * `2019-08-07T04:24:12.494622Z`. Fixed width, so it sorts as text, and DuckDB reads it into
 * TIMESTAMPTZ without loss (the carrier sends up to seven fractional digits; the seventh is 100 ns,
 * below DuckDB's microsecond resolution).
 */
export type CarrierInstant = string & { readonly __brand: 'CarrierInstant' };

const CARRIER_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,7}))?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Reads a carrier date-time: ISO 8601 with 0 to 7 fractional digits, `T` or a space between date and
 * time, an offset or `Z`; a time without an offset is carrier-local time (UTC+07:00).
 * Returns undefined when the text is not such a date-time or names an impossible date.
 */
export function parseCarrierInstant(text: string): CarrierInstant | undefined {
  const carrierForm = CARRIER_FORM.exec(text);
  if (carrierForm) {
    const [, localHour, minute, second] = carrierForm as unknown as [string, string, string, string];
    const utcHour = utcHourOf(localHour);
    return utcHour === undefined ? undefined : (`${utcHour}:${minute}:${second}.000000Z` as CarrierInstant);
  }
  return parseAnyCarrierInstant(text);
}

/**
 * The form of every instant in a tracking result, `2019-08-07T11:24:12+07:00`: its minutes and seconds
 * stay as they are in UTC, so only the hour needs converting, and a run's instants share few hours.
 */
const CARRIER_FORM = /^(\d{4}-\d{2}-\d{2}T\d{2}):([0-5]\d):([0-5]\d)\+07:00$/;
const UTC_HOUR_CACHE_LIMIT = 100_000;
const utcHourOfLocalHour = new Map<string, string | undefined>();

/** `2019-08-07T04` for `2019-08-07T11` at UTC+07:00; undefined for an impossible date or hour. */
function utcHourOf(localHour: string): string | undefined {
  if (utcHourOfLocalHour.has(localHour)) return utcHourOfLocalHour.get(localHour);
  const utcHour = parseAnyCarrierInstant(`${localHour}:00:00+07:00`)?.slice(0, 13);
  if (utcHourOfLocalHour.size >= UTC_HOUR_CACHE_LIMIT) utcHourOfLocalHour.clear();
  utcHourOfLocalHour.set(localHour, utcHour);
  return utcHour;
}

function parseAnyCarrierInstant(text: string): CarrierInstant | undefined {
  const m = CARRIER_DATE_TIME.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', fraction = '', offset] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const offsetMinutes = offset === undefined ? CARRIER_UTC_OFFSET_MINUTES : parseOffsetMinutes(offset);
  if (offsetMinutes === undefined) return undefined;
  let localMs = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC reads years 0 to 99 as 1900 to 1999 (.NET writes 0001-01-01 for "no date").
  if (year < 100) localMs = new Date(localMs).setUTCFullYear(year);
  const iso = new Date(localMs - offsetMinutes * 60_000).toISOString();
  // Only years 0000 to 9999 keep the fixed-width form (others print as +010000-...).
  if (iso.length !== 24) return undefined;
  const micros = fraction.padEnd(6, '0').slice(0, 6);
  return `${iso.slice(0, 19)}.${micros}Z` as CarrierInstant;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

const CALENDAR_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether the text is a day of the calendar as `YYYY-MM-DD`: `2026-02-29` and `2026-04-31` are not. */
export function isCalendarDay(text: string): boolean {
  const m = CALENDAR_DAY.exec(text);
  if (!m) return false;
  const [, year, month, day] = m.map(Number) as [number, number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Minutes east of UTC, or undefined for an impossible offset (`+99:99`). */
function parseOffsetMinutes(offset: string): number | undefined {
  if (offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4));
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

/** Milliseconds since the epoch of a contract instant. */
export function instantToEpochMs(instant: CarrierInstant): number {
  return Date.parse(instant);
}

/** A contract instant from milliseconds since the epoch. */
export function epochMsToInstant(ms: number): CarrierInstant {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z` as CarrierInstant;
}

/**
 * Formats an instant as the carrier writes it: local time at UTC+07:00 with the offset, e.g.
 * `2019-08-07T11:24:12+07:00`; `fractionDigits` (0 to 7) adds a fraction as callbacks carry it.
 */
export function formatCarrierDateTime(epochMs: number, fractionDigits = 0, subMillisecondDigits = ''): string {
  const localMs = epochMs + CARRIER_UTC_OFFSET_MINUTES * 60_000;
  if (fractionDigits === 0 && hasFourDigitYear(localMs)) {
    const day = Math.floor(localMs / DAY_MS);
    const seconds = Math.floor((localMs - day * DAY_MS) / 1000);
    const minutes = Math.floor(seconds / 60);
    return `${dateTextOfDay(day)}T${TWO_DIGITS[Math.floor(minutes / 60)]}:${TWO_DIGITS[minutes % 60]}:${TWO_DIGITS[seconds % 60]}+07:00`;
  }
  const local = new Date(localMs).toISOString();
  const base = local.slice(0, 19);
  const fraction = (local.slice(20, 23) + subMillisecondDigits).padEnd(7, '0').slice(0, fractionDigits);
  return `${base}${fractionDigits > 0 ? `.${fraction}` : ''}+07:00`;
}

/** A day's milliseconds: the carrier's zone keeps no daylight saving, so every carrier day is this long. */
export const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/** Whole milliseconds from 0000-01-01 to 9999-12-31, the instants ISO 8601 writes with four-digit years. */
export function hasFourDigitYear(ms: number): boolean {
  return Number.isInteger(ms) && ms >= -62_167_219_200_000 && ms < 253_402_300_800_000;
}

/**
 * `YYYY-MM-DD` of a day counted from the epoch (of a four-digit year), cached: formatting through Date
 * for every instant is slow, and a tracking result holds a dozen instants of few distinct days.
 */
function dateTextOfDay(day: number): string {
  let text = dateTextByDay.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_MS).toISOString().slice(0, 10);
    if (dateTextByDay.size >= DATE_TEXT_CACHE_LIMIT) dateTextByDay.clear();
    dateTextByDay.set(day, text);
  }
  return text;
}
const dateTextByDay = new Map<number, string>();
const DATE_TEXT_CACHE_LIMIT = 10_000;

/** Carrier-local date and time without an offset (`YYYY-MM-DD hh:mm:ss`), as callback DeliveryDate is seen. */
export function formatCarrierLocalDateTime(epochMs: number): string {
  return new Date(epochMs + CARRIER_UTC_OFFSET_MINUTES * 60_000).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * The carrier day (YYYY-MM-DD) an instant falls in, for a day that starts at midnight at the given
 * UTC offset (the carrier's, UTC+07:00, unless configured otherwise).
 */
export function carrierDayOf(epochMs: number, utcOffsetMinutes = CARRIER_UTC_OFFSET_MINUTES): string {
  const localMs = epochMs + utcOffsetMinutes * 60_000;
  if (hasFourDigitYear(localMs)) return dateTextOfDay(Math.floor(localMs / DAY_MS));
  return new Date(localMs).toISOString().slice(0, 10);
}

/** The first instant (epoch ms) of the carrier day after the one `epochMs` falls in. */
export function nextCarrierDayStart(epochMs: number, utcOffsetMinutes = CARRIER_UTC_OFFSET_MINUTES): number {
  const dayMs = 86_400_000;
  const shifted = epochMs + utcOffsetMinutes * 60_000;
  return Math.floor(shifted / dayMs) * dayMs + dayMs - utcOffsetMinutes * 60_000;
}
