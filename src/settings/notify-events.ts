/** What makes a job run send its notification: how it ended, or the charges it flagged. */
export const NOTIFY_EVENTS = ['failed', 'partial', 'charges', 'ok'] as const;

export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
