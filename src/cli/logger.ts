import pino, { type Logger } from 'pino';

/** Log paths that could carry a secret; pino replaces their values before a line is written. */
export const REDACTED_PATHS = [
  'apiKey',
  'apikey',
  'ApiKey',
  'key',
  'password',
  'authorization',
  'headers.authorization',
  '*.apiKey',
  '*.apikey',
  '*.ApiKey',
  '*.password',
  '*.authorization',
];

export interface LoggerOptions {
  readonly level?: string;
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
