/** The carrier's interface in one import: payload schemas, reference data, time and money rules. */

export * from '../carrier-time.js';
export * from '../field-types.js';
export * from '../money.js';
export * from '../payload-validation.js';
export * from './callback-message.js';
export * from './operation-paths.js';
export * from './order-code.js';
export * from './order-images.js';
export * from './price-quote.js';
export * from './reference-data.js';
export * from './tracking-result.js';
