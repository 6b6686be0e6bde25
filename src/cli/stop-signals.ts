/**
 * Stops a run on SIGINT or SIGTERM: the run takes no new work and commits what it did. With
 * `interruptible`, a second signal aborts `interrupt` (the run gives up what is in flight at once and
 * is finished as interrupted) and only a third gets Node's default handling; without, the second one
 * does. `dispose` gives the signals back to Node's default handling.
 */
export function stopOnSignals(options: { readonly interruptible?: boolean } = {}): {
  signal: AbortSignal;
  interrupt: AbortSignal;
  dispose(): void;
} {
  const stopping = new AbortController();
  const interrupting = new AbortController();
  const dispose = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  function onSignal(): void {
    if (!stopping.signal.aborted) {
      stopping.abort();
      if (!options.interruptible) dispose();
      return;
    }
    interrupting.abort();
    dispose();
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { signal: stopping.signal, interrupt: interrupting.signal, dispose };
}

/**
 * Once `interrupt` aborts, ends the process `afterMs` later with `exitCode` and one line on stderr
 * (after `before`, which stops what would hold the exit), unless it has ended by itself by then: a query or a commit under way, or the warehouse's last
 * checkpoint, must not hold someone who asked twice. What was committed stays; the run, not finished,
 * is then resumed by the next one, as after a kill.
 */
export function giveUpAfterInterrupt(
  interrupt: AbortSignal,
  afterMs: number,
  giveUp: { readonly exitCode: number; readonly line: string; readonly before: () => void },
): void {
  interrupt.addEventListener(
    'abort',
    () => {
      setTimeout(() => {
        giveUp.before();
        process.stderr.write(`${giveUp.line}\n`);
        process.exit(giveUp.exitCode);
      }, afterMs).unref();
    },
    { once: true },
  );
}
