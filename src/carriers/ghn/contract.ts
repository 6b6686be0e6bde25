/** GHN's interface in one import: payload schemas, reference data, error kinds. */

export * from './answer-envelope.js';
export * from './answer-errors.js';
export * from './carrier.js';
export * from './ghn-fields.js';
export * from './order-detail.js';
export * from './order-fees.js';
export * from './reference-data.js';
export * from './webhook-message.js';
