/**
 * Bounds how many orders are being looked up at once while the work list streams in. Waiting takes
 * one promise per blocked dispatch, not a race over every lookup in flight (which costs time and
 * memory in proportion to the window at each step).
 */
export class DispatchWindow {
  private active = 0;
  private entering: (() => void)[] = [];
  // Apart from those entering, so that waking a drain never takes the turn of a dispatch waiting for a place.
  private draining: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves once a place is free, and takes it. */
  async enter(): Promise<void> {
    while (this.active >= this.size) await new Promise<void>((resolve) => this.entering.push(resolve));
    this.active++;
  }

  leave(): void {
    this.active--;
    this.entering.shift()?.();
    if (this.active === 0) for (const wake of this.draining.splice(0)) wake();
  }

  /** Resolves once every place is free again. */
  async drained(): Promise<void> {
    while (this.active > 0) await new Promise<void>((resolve) => this.draining.push(resolve));
  }
}
