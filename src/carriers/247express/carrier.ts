import type { CarrierDefinition } from '../carrier-definition.js';
import { ORDER_STATUSES } from './reference-data.js';

export const EXPRESS_247: CarrierDefinition = {
  id: '247express',
  name: '247Express',
  statuses: ORDER_STATUSES,
};
