/**
 * Requests per second and in flight. The carrier documents no quota for its customer operations
 * (price, images), so the defaults are conservative.
 */
export interface OperationPace {
  readonly requestsPerSecond: number;
  readonly concurrency: number;
}

/** The default pace, in a module of its own so that the settings catalog names it without loading the limiter library. */
export const DEFAULT_OPERATION_PACE: OperationPace = { requestsPerSecond: 5, concurrency: 4 };
