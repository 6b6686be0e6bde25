/**
 * The largest answer body read by default: the carrier's JSON answers are a few kilobytes. A module of
 * its own, so that the settings catalog names it without loading the HTTP client.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 1_048_576;
