import { DEFAULT_CARRIER_ID } from '../carriers/known-carriers.js';

/**
 * The carrier whose orders a run reads, looks up and stores: the product's one tracked carrier, until
 * runs are given theirs. Each run passes it down to the warehouse's writers as a value.
 */
export const RUN_CARRIER = DEFAULT_CARRIER_ID;
