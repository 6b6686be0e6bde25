import { callbacksStep } from './callbacks-step.js';
import type { JobDefinition, JobStepResult } from './job-definition.js';
import { trackingStep } from './tracking-step.js';

/** The nightly reconciliation: load the journaled callbacks, then track the configured source within the quotas. */
export const nightly: JobDefinition = {
  name: 'nightly',
  description: 'load journaled callbacks, track the configured source within the quotas',
  defaultSchedule: '0 2 * * *',
  async run(context) {
    const steps: JobStepResult[] = [];
    const callbacks = await callbacksStep(context);
    if (callbacks !== undefined) steps.push(callbacks);
    steps.push(await trackingStep(context, 'nightly'));
    return steps;
  },
};
