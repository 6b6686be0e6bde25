/**
 * Stops a run on SIGINT or SIGTERM: the run takes no new work and commits what it did. `dispose`
 * gives the signals back to Node's default handling.
 */
export function stopOnSignals(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
