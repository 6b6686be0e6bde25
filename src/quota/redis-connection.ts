import type { Redis } from 'ioredis';
import { ProductError } from '../errors/product-error.js';

/** Redis cannot be reached or was lost: the shared quota is in doubt, so nothing more is spent. */
export class RedisUnavailableError extends ProductError {
  constructor(message: string) {
    super('REDIS_UNAVAILABLE', message);
  }
}

/** A Redis address as logs may show it: no user name, no password. */
export function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

export interface SharedRedis {
  readonly client: Redis;
  /** Aborted the first time the connection drops: what Redis holds may have changed (a restart), so a run stops spending. */
  readonly lost: AbortSignal;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Connects to Redis once, failing fast when it is down. A connection that drops is not retried in the
 * background (commands would queue and spend later against counts a restart may have wiped): it fails
 * every command from then on, and `lost` tells the run to stop spending.
 */
export async function connectRedis(url: string): Promise<SharedRedis> {
  // Loaded only by a run that shares its quota: every other command starts without loading it.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  const lost = new AbortController();
  // Errors reach callers through their commands; an unheard 'error' event would kill the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new RedisUnavailableError(
      `cannot reach Redis at ${redactedRedisUrl(url)}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let closing = false;
  client.once(
    'close',
    () => closing || lost.abort(new RedisUnavailableError(`lost the connection to Redis at ${redactedRedisUrl(url)}`)),
  );
  return {
    client,
    lost: lost.signal,
    close: async () => {
      closing = true;
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
