import type { JobDefinition } from './job-definition.js';
import { trackingStep } from './tracking-step.js';

/** The nightly reconciliation: track the configured source within the quotas. */
export const nightly: JobDefinition = {
  name: 'nightly',
  description: 'track the configured source within the quotas',
  defaultSchedule: '0 2 * * *',
  async run(context) {
    return [await trackingStep(context, 'nightly')];
  },
};
