import type { JobDefinition } from './job-definition.js';
import { codStep, jobReportRequest } from './reports-step.js';

/** The weekly COD check: the imported payout statements against the delivered COD orders. */
export const codAudit: JobDefinition = {
  name: 'cod-audit',
  description: 'check the imported payout statements against the delivered COD orders (the cod report)',
  defaultSchedule: '0 7 * * 1',
  async run(context) {
    return [await codStep(context, jobReportRequest(context, 'cod-audit'))];
  },
};
