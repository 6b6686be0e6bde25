import { Option } from 'commander';
import pino, { type Logger } from 'pino';

/** The levels pino knows, from the fewest lines to the most. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The `--log-level` flag of every command: a level pino does not know is refused as the flags are
 * parsed, in one line, rather than by pino with a stack trace once the command runs.
 */
export function logLevelOption(defaultLevel: LogLevel = 'info'): Option {
  return new Option(
    '--log-level <level>',
    `fatal, error, warn, info, debug or trace (default: ${defaultLevel})`,
  ).choices(LOG_LEVELS);
}

/** Log paths that could carry a secret; pino replaces their values before a line is written. */
export const REDACTED_PATHS = [
  'apiKey',
  'apikey',
  'ApiKey',
  'key',
  // GHN's account credential travels as a `Token` header.
  'token',
  'Token',
  'password',
  'authorization',
  'headers.authorization',
  'headers.token',
  '*.apiKey',
  '*.apikey',
  '*.ApiKey',
  '*.token',
  '*.Token',
  '*.password',
  '*.authorization',
];

export interface LoggerOptions {
  readonly level?: LogLevel | undefined;
  /** Pretty lines for a person at a terminal; JSON lines for cron and log collectors. */
  readonly pretty?: boolean;
}

/** The process's logger: JSON lines on stderr (pretty on a terminal), secrets redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const pretty = options.pretty ?? Boolean(process.stderr.isTTY);
  const base = { level: options.level ?? 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  if (pretty) {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: true, translateTime: 'SYS:HH:MM:ss' } },
    });
  }
  return pino(base, pino.destination({ dest: 2, sync: true }));
}
