import { instantToEpochMs, parseCarrierInstant } from '../carriers/carrier-time.js';
import { UserError } from '../errors/user-error.js';
import { SETTINGS } from '../settings/catalog.js';

/** Pretends the current time is this instant (then runs on): for demos and tests against a sandbox whose clock was moved. */
const NOW_ENV = SETTINGS.now.env;

/** The clock a run reads the carrier day and its timestamps from. */
export function runClock(env: NodeJS.ProcessEnv): () => number {
  const pretended = env[NOW_ENV];
  if (pretended === undefined || pretended === '') return () => Date.now();
  const instant = parseCarrierInstant(pretended);
  if (instant === undefined) throw new UserError(`${NOW_ENV}: not a date-time: ${pretended}`);
  const offset = instantToEpochMs(instant) - Date.now();
  return () => Date.now() + offset;
}
