import { callbacksStep } from './callbacks-step.js';
import { exportStep } from './export-step.js';
import type { JobDefinition, JobStepResult } from './job-definition.js';
import { chargesStep, failuresStep, htmlPageStep, jobReportRequest } from './reports-step.js';
import { retentionStep } from './retention-step.js';
import { trackingStep } from './tracking-step.js';

/**
 * The nightly reconciliation: load the journaled callbacks, track the configured source within the
 * quotas, then each other carrier's of `alsoTrack` within its own, prune the old runs' data when the configuration has a retention section, then export the
 * charges and failures reports for the period ending with the carrier day, and the HTML page of them
 * beside their files, and last, when the configuration has an export section, the warehouse's Parquet
 * snapshot. A retention section that asks for it compacts the warehouse once the job is done.
 */
export const nightly: JobDefinition = {
  name: 'nightly',
  description:
    'load journaled callbacks, track the configured source within the quotas, export the charges and failures reports and their HTML page',
  defaultSchedule: '0 2 * * *',
  async run(context) {
    const steps: JobStepResult[] = [];
    const callbacks = await callbacksStep(context);
    if (callbacks !== undefined) steps.push(callbacks);
    steps.push(await trackingStep(context, 'nightly'));
    for (const other of context.settings.alsoTracked) steps.push(await trackingStep(context, 'nightly', other));
    const retention = context.settings.retention;
    if (retention !== undefined) steps.push(await retentionStep(context, retention));
    const request = jobReportRequest(context, 'nightly');
    steps.push(await chargesStep(context, request));
    steps.push(await failuresStep(context, request));
    steps.push(await htmlPageStep(context, request));
    const snapshotTo = context.settings.snapshotTo;
    if (snapshotTo !== undefined) steps.push(await exportStep(context, snapshotTo));
    return steps;
  },
  compactsAfterwards: (settings) => settings.retention?.compact ?? false,
};
