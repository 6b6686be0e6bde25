import type { CarrierDefinition } from '../carrier-definition.js';
import { GHN_STATUSES } from './reference-data.js';

export const GHN: CarrierDefinition = {
  id: 'ghn',
  name: 'GHN',
  statuses: GHN_STATUSES,
};
