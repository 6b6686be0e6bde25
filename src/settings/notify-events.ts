/** What makes a job run send its notification: how it ended, the charges it flagged, or the COD not paid. */
export const NOTIFY_EVENTS = ['failed', 'partial', 'charges', 'cod', 'ok'] as const;

export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
