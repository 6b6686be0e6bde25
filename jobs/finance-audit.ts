import { neutralStatusIn } from '../src/carriers/carrier-definition-sql.js';
import { orderPriceRequests, type PriceInputSource } from '../src/pipeline/price-inputs.js';
import { runPriceQuotes } from '../src/pipeline/price-run.js';
import { type PartnerRecordsSource, partnerFile } from '../src/reports/partner-records.js';
import { carrierDate } from '../src/reports/report-sql.js';
import { sameOrder } from '../src/warehouse/order-keys.js';
import type { JobContext, JobDefinition, JobStepResult } from './job-definition.js';
import { chargesStep, jobReportRequest, reconcileStep } from './reports-step.js';

/** The carrier's delivered orders of the period (carrier days, by delivery date) that have no quote it gave yet. */
async function ordersToQuote(
  context: JobContext,
  carrier: string,
  fromDay: string,
  toDay: string,
): Promise<Set<string>> {
  const reader = await context.warehouse.readAll(
    `SELECT o.order_code FROM orders AS o
     WHERE o.carrier = $carrier AND ${neutralStatusIn(['delivered'], 'o.status', 'o.carrier')}
       AND ${carrierDate('o.delivery_date')} BETWEEN CAST($fromDay AS DATE) AND CAST($toDay AS DATE)
       AND NOT EXISTS (SELECT 1 FROM price_quotes AS q WHERE ${sameOrder('q', 'o')} AND q.ok)`,
    { carrier, fromDay, toDay },
  );
  return new Set(reader.getColumnsJS()[0]?.map(String) ?? []);
}

/** The destinations file's requests, only for the orders asked for; the others are not this run's work. */
function onlyOrders(source: PriceInputSource, wanted: ReadonlySet<string>): PriceInputSource {
  return {
    description: `${source.description} (delivered, unquoted)`,
    async *items() {
      for await (const item of source.items()) if (item.orderCode !== null && wanted.has(item.orderCode)) yield item;
    },
  };
}

/**
 * The finance audit: quote the period's delivered orders that have no quote yet (when the partner's
 * destinations are configured), export the charges report with the partner's invoiced amounts, and
 * reconcile the partner's invoice file against the carrier.
 */
export const financeAudit: JobDefinition = {
  name: 'finance-audit',
  description: "quote the period's delivered orders, export the charges report and reconcile the partner's invoices",
  defaultSchedule: '0 6 * * 1',
  async run(context) {
    const steps: JobStepResult[] = [];
    const request = jobReportRequest(context, 'finance-audit');
    const { destinations, invoices } = context.settings.financeAudit;
    if (destinations !== undefined) {
      const pricing = await context.settings.pricing();
      const wanted = await ordersToQuote(context, pricing.carrier, request.scope.fromDay!, request.scope.toDay!);
      const summary = await runPriceQuotes({
        ...pricing,
        job: 'finance-audit-price',
        warehouse: context.warehouse,
        source: onlyOrders(orderPriceRequests(context.warehouse, pricing.carrier, destinations), wanted),
        stop: context.stop,
        logger: context.logger,
      });
      steps.push({
        step: 'price',
        exitState: summary.exitState,
        exitCode: summary.exitCode,
        summary: { ...summary, ordersToQuote: wanted.size },
      });
    }
    const partner: PartnerRecordsSource | undefined = invoices === undefined ? undefined : partnerFile(invoices);
    steps.push(await chargesStep(context, request, partner));
    if (partner !== undefined) steps.push(await reconcileStep(context, request, partner));
    return steps;
  },
};
