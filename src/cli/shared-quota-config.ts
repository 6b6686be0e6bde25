import { z } from 'zod';
import { parseShard } from '../pipeline/tracking/shard.js';

/** The whole URL of the Redis that several workers share the quota through, its password included. */
export const REDIS_URL_ENV = 'PARCEL_RECON_REDIS_URL';

/** `I/N` as `--shard` and the configuration's `track.shard` write it. */
export const shardText = z
  .string()
  .regex(/^\d+\/\d+$/, 'I/N, e.g. 0/4')
  .refine((text) => {
    const { index, count } = parseShard(text);
    return count >= 1 && count <= 1024 && index < count;
  }, 'I/N with 0 <= I < N <= 1024');

/** This worker's part of the codes: those whose hash modulo N is I (0-based). */
export const shardSchema = shardText.transform(parseShard);

/**
 * The shared quota's Redis as the configuration names it: without a password, as a configuration
 * file is read by more people and tools than the job; the whole URL comes with $PARCEL_RECON_REDIS_URL.
 */
export const redisUrlWithoutPassword = z
  .url({ protocol: /^rediss?$/, error: 'a redis:// or rediss:// URL' })
  .refine(
    (url) => !URL.canParse(url) || new URL(url).password === '',
    `the URL holds a password; give the whole URL in ${REDIS_URL_ENV} instead`,
  );
