import { carrierDayOf } from '../carriers/247express/contract.js';
import type { SandboxClock } from './sandbox-clock.js';

export interface QuotaLimits {
  readonly perKeyDaily: number;
  readonly globalDaily: number;
  readonly dayUtcOffsetMinutes: number;
}

export interface KeyUsage {
  /** Lookups admitted and answered. */
  lookups: number;
  /** Lookups refused with APIKEY_LIMIT. */
  refused: number;
}

export interface DayUsage {
  lookups: number;
  refused: number;
  perKey: Record<string, KeyUsage>;
}

export type Admission = 'admitted' | 'key_limit' | 'global_limit';

/**
 * The carrier's daily lookup limits, per key and in total, counted per carrier day of the sandbox's
 * clock. Every request that names a known key is counted, whatever its answer: the carrier received it.
 */
export class LookupQuota {
  private readonly days = new Map<string, DayUsage>();

  constructor(
    private limits: QuotaLimits,
    private readonly clock: SandboxClock,
  ) {}

  configure(limits: Partial<QuotaLimits>): void {
    this.limits = { ...this.limits, ...limits };
  }

  get current(): QuotaLimits {
    return this.limits;
  }

  admit(alias: string): Admission {
    const day = carrierDayOf(this.clock.now(), this.limits.dayUtcOffsetMinutes);
    let usage = this.days.get(day);
    if (!usage) {
      usage = { lookups: 0, refused: 0, perKey: {} };
      this.days.set(day, usage);
    }
    usage.perKey[alias] ??= { lookups: 0, refused: 0 };
    const key = usage.perKey[alias];
    let admission: Admission = 'admitted';
    if (key.lookups >= this.limits.perKeyDaily) admission = 'key_limit';
    else if (usage.lookups >= this.limits.globalDaily) admission = 'global_limit';
    if (admission === 'admitted') {
      key.lookups++;
      usage.lookups++;
    } else {
      key.refused++;
      usage.refused++;
    }
    return admission;
  }

  usage(): Record<string, DayUsage> {
    return structuredClone(Object.fromEntries(this.days));
  }
}
