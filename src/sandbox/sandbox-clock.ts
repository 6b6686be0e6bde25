export type ClockMode = 'manual' | 'realtime';

/**
 * The sandbox's time. Manual: it stands still until moved. Realtime: it runs with the wall clock,
 * `speed` times as fast, and can still be moved forward. Tests and demos move it to make orders
 * advance through their lives.
 */
export class SandboxClock {
  private baseMs: number;
  private wallBaseMs: number;
  private readonly listeners: (() => void)[] = [];

  constructor(
    start: number,
    readonly mode: ClockMode = 'manual',
    readonly speed = 1,
  ) {
    this.baseMs = start;
    this.wallBaseMs = Date.now();
  }

  now(): number {
    if (this.mode === 'manual') return this.baseMs;
    return this.baseMs + Math.floor((Date.now() - this.wallBaseMs) * this.speed);
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError('the sandbox clock only moves forward');
    this.baseMs += ms;
    for (const listener of this.listeners) listener();
  }

  /** Moves the clock to an instant not before its current time. */
  moveTo(instantMs: number): void {
    this.advance(instantMs - this.now());
  }

  onAdvance(listener: () => void): void {
    this.listeners.push(listener);
  }
}
