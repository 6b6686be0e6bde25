import { UserError } from '../errors/user-error.js';
import { DEFAULT_DISPLAY_TIME_ZONE, isTimeZone } from '../reports/display-time.js';

/** The environment variable of the display time zone: a report's `--time-zone` wins over it, it over a job's `timeZone`. */
export const TIME_ZONE_ENV = 'PARCEL_RECON_TIME_ZONE';

/**
 * The time zone reports and messages show times in: the first setting given, each a value and where
 * it came from (`--time-zone`, `PARCEL_RECON_TIME_ZONE`, `timeZone`), else the carrier's. One that
 * names no time zone is the user's mistake, named by where it came from.
 */
export function displayTimeZone(settings: readonly (readonly [string | undefined, string])[]): string {
  const given = settings.find(([value]) => value !== undefined);
  if (given === undefined) return DEFAULT_DISPLAY_TIME_ZONE;
  const [zone, from] = given as readonly [string, string];
  if (!isTimeZone(zone))
    throw new UserError(
      `${from}: ${JSON.stringify(zone)} is not a time zone; give an IANA name such as Asia/Ho_Chi_Minh`,
    );
  return zone;
}
