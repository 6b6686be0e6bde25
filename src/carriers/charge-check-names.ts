/**
 * The charge checks the product knows, by name: each carrier's definition says which of them its
 * answers allow, and the charges report (reports/charges-report.ts) defines what each compares.
 */
export const CHARGE_CHECK_NAMES = [
  'lines_sum',
  'components_sum',
  'cal_weight',
  'chargeable_weight',
  'fuel',
  'vat',
  'far_region_line',
  'quote',
  'return_not_returned',
  'cancelled_charged',
  'changed_after_delivery',
  'invoice',
] as const;

export type ChargeCheckName = (typeof CHARGE_CHECK_NAMES)[number];
