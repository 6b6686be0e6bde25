import { UserError } from '../errors/user-error.js';

/**
 * A database URL as a command line or a configuration gives it: a URL, and without a password, since
 * both are seen by more people and tools than the run. `where` tells where the password goes instead.
 */
export function passwordFreeUrl(flag: string, option: string, example: string, where: string): string {
  let parsed: URL;
  try {
    parsed = new URL(flag);
  } catch {
    throw new UserError(`${option}: not a URL (${example})`);
  }
  if (parsed.password !== '') throw new UserError(`${option}: the URL holds a password; give it in ${where}`);
  return flag;
}
