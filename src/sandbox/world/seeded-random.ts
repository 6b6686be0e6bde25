import prand from 'pure-rand';

/** 32-bit finalizer of MurmurHash3: spreads the bits of one number over all of them. */
function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seed derived from a base seed and the parts naming one stream (an account, an order, ...). */
export function deriveSeed(seed: number, ...parts: (number | string)[]): number {
  let h = mix32(seed ^ 0x9e3779b9);
  for (const part of parts) {
    if (typeof part === 'number') h = mix32(h ^ mix32(part + 0x632be5ab));
    else for (let i = 0; i < part.length; i++) h = mix32(h ^ (part.charCodeAt(i) * 0x01000193));
  }
  return h;
}

/**
 * A deterministic random stream. Each order draws from its own stream derived from the world's seed,
 * so its data is the same whatever the order in which orders are generated.
 */
export class SeededRandom {
  private readonly generator: prand.RandomGenerator;

  constructor(seed: number) {
    this.generator = prand.xoroshiro128plus(seed);
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return prand.unsafeUniformIntDistribution(min, max, this.generator);
  }

  /** A number in [0, 1). */
  fraction(): number {
    return this.int(0, 0x3fffffff) / 0x40000000;
  }

  chance(probability: number): boolean {
    return this.fraction() < probability;
  }

  /** A number of milliseconds between `minHours` and `maxHours`, to the second. */
  hours(minHours: number, maxHours: number): number {
    return this.int(Math.round(minHours * 3600), Math.round(maxHours * 3600)) * 1000;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /** An item chosen with the given weights. */
  pickWeighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, weight]) => sum + weight, 0);
    let point = this.fraction() * total;
    for (const [item, weight] of items) {
      point -= weight;
      if (point < 0) return item;
    }
    const last = items[items.length - 1];
    if (last === undefined) throw new RangeError('pick from an empty list');
    return last[0];
  }

  hex(length: number): string {
    let text = '';
    while (text.length < length) text += this.int(0, 0xffff).toString(16).padStart(4, '0');
    return text.slice(0, length);
  }
}
