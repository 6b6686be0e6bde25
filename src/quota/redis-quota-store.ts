import type { Redis } from 'ioredis';
import type { QuotaLimits, QuotaUsageStore, Reservation } from './quota-ledger.js';
import { TOTAL_ALIAS } from './quota-policy.js';
import { RedisUnavailableError } from './redis-connection.js';

/** Any failure of the shared ledger puts the quota in doubt: the caller refuses to spend. */
async function inDoubtOnFailure<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw new RedisUnavailableError(
      `the shared quota ledger failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A day's counts outlive the day by this much, for runs that look back; then Redis drops them. */
const DAY_TTL_SECONDS = 4 * 86_400;

/**
 * Checks both limits and reserves in one step, so workers never reserve the same lookups twice; a key
 * the carrier answered APIKEY_LIMIT for gets nothing.
 * KEYS[1] the day's hash, KEYS[2] the day's limit answers; ARGV alias, wanted, per-key limit, total limit, TTL.
 */
const RESERVE_LUA = `
local key = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local total = tonumber(redis.call('HGET', KEYS[1], '${TOTAL_ALIAS}') or '0')
local grant = math.min(tonumber(ARGV[2]), tonumber(ARGV[3]) - key, tonumber(ARGV[4]) - total)
if grant < 0 or redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then grant = 0 end
if grant > 0 then
  key = redis.call('HINCRBY', KEYS[1], ARGV[1], grant)
  total = redis.call('HINCRBY', KEYS[1], '${TOTAL_ALIAS}', grant)
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
return {grant, key, total}
`;

/** Gives back ARGV[2] lookups of the key and of the total, never below zero. */
const RELEASE_LUA = `
local key = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local total = tonumber(redis.call('HGET', KEYS[1], '${TOTAL_ALIAS}') or '0')
local back = math.min(tonumber(ARGV[2]), key, total)
if back > 0 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -back)
  redis.call('HINCRBY', KEYS[1], '${TOTAL_ALIAS}', -back)
end
return back
`;

/**
 * Raises each key's count to at least the given one (what this worker's warehouse already knows), the
 * total by the same differences, then the total to at least its own floor.
 */
const FLOOR_LUA = `
local totalFloor = 0
for i = 1, #ARGV - 1, 2 do
  local floor = tonumber(ARGV[i + 1])
  if ARGV[i] == '${TOTAL_ALIAS}' then
    totalFloor = floor
  else
    local current = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
    if current < floor then
      redis.call('HSET', KEYS[1], ARGV[i], floor)
      redis.call('HINCRBY', KEYS[1], '${TOTAL_ALIAS}', floor - current)
    end
  end
end
local total = tonumber(redis.call('HGET', KEYS[1], '${TOTAL_ALIAS}') or '0')
if total < totalFloor then redis.call('HSET', KEYS[1], '${TOTAL_ALIAS}', totalFloor) end
redis.call('EXPIRE', KEYS[1], ${DAY_TTL_SECONDS})
return 1
`;

interface QuotaScripts {
  quotaReserve(
    key: string,
    limitKey: string,
    alias: string,
    wanted: number,
    perKey: number,
    total: number,
    ttl: number,
  ): Promise<[number, number, number]>;
  quotaRelease(key: string, alias: string, lookups: number): Promise<number>;
  quotaFloor(key: string, ...fieldsAndCounts: (string | number)[]): Promise<number>;
}

export function quotaDayKey(prefix: string, day: string): string {
  return `${prefix}:quota:${day}`;
}

/** The hash of a carrier day's APIKEY_LIMIT answers: key alias -> when the first came (ISO 8601). */
function limitAnswersKey(prefix: string, day: string): string {
  return `${prefix}:quota-limit:${day}`;
}

/**
 * The daily quota ledger shared by every worker, in one Redis hash per carrier day (a field per key
 * alias and '*' for the total). The scripts go through ioredis' defineCommand, which sends EVALSHA and
 * falls back to EVAL when Redis answers NOSCRIPT (its script cache is empty after a restart).
 */
export function redisQuotaStore(
  client: Redis,
  prefix: string,
): QuotaUsageStore & { floor(day: string, counts: ReadonlyMap<string, number>): Promise<void> } {
  client.defineCommand('quotaReserve', { numberOfKeys: 2, lua: RESERVE_LUA });
  client.defineCommand('quotaRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
  client.defineCommand('quotaFloor', { numberOfKeys: 1, lua: FLOOR_LUA });
  const scripts = client as unknown as QuotaScripts;
  return {
    read: async (day) => {
      const fields = await inDoubtOnFailure(client.hgetall(quotaDayKey(prefix, day)));
      return new Map(Object.entries(fields).map(([alias, count]) => [alias, Number(count)]));
    },
    reserve: async (day, alias, lookups, limits: QuotaLimits): Promise<Reservation> => {
      const [granted, key, total] = await inDoubtOnFailure(
        scripts.quotaReserve(
          quotaDayKey(prefix, day),
          limitAnswersKey(prefix, day),
          alias,
          lookups,
          limits.perKey,
          limits.total,
          DAY_TTL_SECONDS,
        ),
      );
      return { granted: Number(granted), counts: { key: Number(key), total: Number(total) } };
    },
    reportLimit: async (day, alias) => {
      const key = limitAnswersKey(prefix, day);
      await inDoubtOnFailure(
        client.multi().hsetnx(key, alias, new Date().toISOString()).expire(key, DAY_TTL_SECONDS).exec(),
      );
    },
    readLimitReports: async (day) => new Set(await inDoubtOnFailure(client.hkeys(limitAnswersKey(prefix, day)))),
    release: async (day, alias, lookups) => {
      await inDoubtOnFailure(scripts.quotaRelease(quotaDayKey(prefix, day), alias, lookups));
    },
    floor: async (day, counts) => {
      if (counts.size === 0) return;
      await inDoubtOnFailure(scripts.quotaFloor(quotaDayKey(prefix, day), ...[...counts].flat()));
    },
  };
}
