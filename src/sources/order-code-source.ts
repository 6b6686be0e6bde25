import { ProductError } from '../errors/product-error.js';

/** One order code read from a source, with where it came from. */
export interface SourcedCode {
  /** The code as read, trimmed; the pipeline checks the carrier's rules and de-duplicates. */
  readonly orderCode: string;
  /** The `account` column (a key alias), when the source has one and the row fills it. */
  readonly account: string | null;
  /** The `carrier` column (a carrier's id; null when the row leaves it empty), when the source has one. */
  readonly carrier?: string | null;
  /** Where the row is, for rejects and logs: `orders.csv:12`, `postgres row 7`. */
  readonly origin: string;
}

/** A row the source could not read as an order code; the run goes on without it. */
export interface SourceRejection {
  readonly origin: string;
  /** One line naming the problem: `no order_code in this row`, `record over 65536 bytes`... */
  readonly reason: string;
  /** The row's text as far as it is known and safe to show (cut to 200 characters), else null. */
  readonly text: string | null;
}

export type SourceItem =
  | { readonly kind: 'code'; readonly code: SourcedCode }
  | { readonly kind: 'rejected'; readonly rejection: SourceRejection };

/** Where a run's order codes come from: read once, streaming, in source order. */
export interface OrderCodeSource {
  /** For logs and the `runs` table: `csv:orders.csv`, `postgres:db@host/query`... never a password. */
  readonly description: string;
  items(): AsyncIterable<SourceItem>;
}

/**
 * A problem with the whole source (file missing, no order_code column, query failed): the run cannot
 * start. Its message is one line for the user and never carries a password.
 */
export class SourceError extends ProductError {
  constructor(message: string) {
    super('SOURCE_UNREADABLE', message);
  }
}
