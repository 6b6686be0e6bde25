import { codAudit } from './cod-audit.js';
import { financeAudit } from './finance-audit.js';
import type { JobDefinition } from './job-definition.js';
import { nightly } from './nightly.js';

/** Every named job, in the order `jobs list` shows them. */
export const JOBS: readonly JobDefinition[] = [nightly, financeAudit, codAudit];

export function findJob(name: string): JobDefinition | undefined {
  return JOBS.find((job) => job.name === name);
}
