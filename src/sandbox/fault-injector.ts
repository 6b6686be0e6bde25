import { deriveSeed, SeededRandom } from './world/seeded-random.js';

export const FAULT_KINDS = ['exception', 'server_error', 'reset', 'hang', 'malformed', 'rate_limited'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** 247Express's operations faults are injected into. */
export const EXPRESS_OPERATIONS = ['tracking', 'price', 'images'] as const;
/** An operation of 247Express's, or the id of another carrier the sandbox serves: every call of its API. */
export type Operation = (typeof EXPRESS_OPERATIONS)[number] | (string & {});

export interface FaultSettings {
  /** Each answer is delayed by a time drawn uniformly from [latencyMinMs, latencyMaxMs]. */
  readonly latencyMinMs: number;
  readonly latencyMaxMs: number;
  /** Share of tracking lookups answered errorCode EXCEPTION (HTTP 200). */
  readonly exceptionRate: number;
  /** Share of requests answered HTTP 500, 502 or 503 with an HTML body. */
  readonly serverErrorRate: number;
  /** Share of requests whose connection is reset without an answer. */
  readonly resetRate: number;
  /** Share of requests never answered; the connection is closed after hangMs. */
  readonly hangRate: number;
  readonly hangMs: number;
  /** Share of requests answered HTTP 200 with a truncated or non-JSON body. */
  readonly malformedRate: number;
  /** Share of requests answered HTTP 429 with Retry-After. */
  readonly rateLimitRate: number;
  readonly retryAfterSeconds: number;
}

export interface ScriptedFault {
  readonly kind: FaultKind;
  readonly operation?: Operation;
  readonly orderCode?: string;
  /** How many matching requests get this fault. */
  times: number;
}

/**
 * Decides, request by request, which fault (if any) the sandbox injects: scripted faults first (for
 * tests that need one exact failure), then the configured shares drawn from a seeded stream.
 */
export class FaultInjector {
  private readonly rng: SeededRandom;
  private readonly scripted: ScriptedFault[] = [];

  constructor(
    private settings: FaultSettings,
    seed: number,
  ) {
    this.rng = new SeededRandom(deriveSeed(seed, 'faults'));
  }

  configure(settings: Partial<FaultSettings>): void {
    this.settings = { ...this.settings, ...settings };
  }

  get current(): FaultSettings {
    return this.settings;
  }

  script(fault: ScriptedFault): void {
    this.scripted.push({ ...fault });
  }

  pick(operation: Operation, orderCode: string | undefined): FaultKind | undefined {
    const scripted = this.scripted.find(
      (f) =>
        f.times > 0 &&
        (f.operation === undefined || f.operation === operation) &&
        (f.orderCode === undefined || f.orderCode === orderCode) &&
        // EXCEPTION is an answer of the tracking lookup only.
        (f.kind !== 'exception' || operation === 'tracking'),
    );
    if (scripted) {
      scripted.times--;
      return scripted.kind;
    }
    const s = this.settings;
    const shares: [FaultKind, number][] = [
      ['exception', operation === 'tracking' ? s.exceptionRate : 0],
      ['server_error', s.serverErrorRate],
      ['reset', s.resetRate],
      ['hang', s.hangRate],
      ['malformed', s.malformedRate],
      ['rate_limited', s.rateLimitRate],
    ];
    if (shares.every(([, share]) => share === 0)) return undefined;
    let point = this.rng.fraction();
    for (const [kind, share] of shares) {
      point -= share;
      if (point < 0) return kind;
    }
    return undefined;
  }

  latencyMs(): number {
    const { latencyMinMs: min, latencyMaxMs: max } = this.settings;
    if (max <= 0) return 0;
    return min >= max ? min : this.rng.int(min, max);
  }

  pickServerErrorStatus(): number {
    return this.rng.pick([500, 502, 503]);
  }
}
