/** One worker's part of the codes: those whose hash modulo `count` is `index` (0-based). */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32 bits) over the UTF-8 bytes: the same on every machine and Node version. */
function fnv1a(text: string): number {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash;
}

/** True when `identity` (an order code, or for an unreadable row its origin) belongs to the shard. */
export function inShard(identity: string, shard: Shard | undefined): boolean {
  return shard === undefined || fnv1a(identity) % shard.count === shard.index;
}

/** The shard `I/N` names; NaN parts when the text is not of that form. */
export function parseShard(text: string): Shard {
  const [index, count] = text.split('/').map(Number);
  return { index: index ?? Number.NaN, count: count ?? Number.NaN };
}

export function describeShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}
