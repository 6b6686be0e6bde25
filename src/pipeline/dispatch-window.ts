/**
 * Bounds how many orders are being looked up at once while the work list streams in. Waiting takes
 * one promise per blocked dispatch, not a race over every lookup in flight (which costs time and
 * memory in proportion to the window at each step).
 */
export class DispatchWindow {
  private active = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves once a place is free, and takes it. */
  async enter(): Promise<void> {
    while (this.active >= this.size) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.active++;
  }

  leave(): void {
    this.active--;
    this.waiters.shift()?.();
  }

  /** Resolves once every place is free again. */
  async drained(): Promise<void> {
    while (this.active > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}
