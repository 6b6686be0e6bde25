/**
 * Attempts in a row without an answer from the carrier after which a run stops sending. A module of
 * its own, so that the settings catalog names it without loading the HTTP client's failures.
 */
export const DEFAULT_BREAKER_ATTEMPTS = 50;
