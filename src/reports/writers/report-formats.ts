/** The formats a report is written in; a module of its own, so settings name them without loading the writers. */
export const REPORT_FORMATS = ['csv', 'parquet', 'json', 'xlsx'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];
