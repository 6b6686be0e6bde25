/** How long a command waits for a callback receiver that holds the warehouse for one of its short loads. */
export const WAREHOUSE_BUSY_WAIT_MS = 10_000;
