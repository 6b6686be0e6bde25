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
