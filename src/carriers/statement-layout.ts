import { z } from 'zod';

/** The kinds of fee a statement withholds, whatever the carrier calls them. */
export const FEE_TYPES = [
  'shipping',
  'cod',
  'insurance',
  'fuel',
  'vat',
  'remote_area',
  'return',
  'redelivery',
  'address_change',
  'reweigh',
  'other',
] as const;
export type FeeType = (typeof FEE_TYPES)[number];

/** The values of a statement line a layout maps to columns; fees are mapped apart, one column each. */
export const STATEMENT_FIELDS = [
  'batchId',
  'batchDate',
  'orderCode',
  'lineKind',
  'codCollected',
  'debts',
  'netPaid',
  'batchTotal',
] as const;
export type StatementField = (typeof STATEMENT_FIELDS)[number];

/** A column's header, or several it may be spelled as (the first found is read). */
const headerNames = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/**
 * A statement's columns: which header holds each value and which headers hold fees of which type.
 * Headers are matched in any case, with or without Vietnamese diacritics, blanks and punctuation.
 */
export const StatementColumnsSchema = z
  .object({
    columns: z
      .object({
        batchId: headerNames,
        batchDate: headerNames,
        orderCode: headerNames,
        lineKind: headerNames.optional(),
        codCollected: headerNames,
        debts: headerNames.optional(),
        netPaid: headerNames,
        batchTotal: headerNames.optional(),
      })
      .strict(),
    /** Each fee column's header and the type of fee it holds; several columns may hold one type. */
    fees: z.record(z.string().min(1), z.enum(FEE_TYPES)).default({}),
  })
  .strict();

/**
 * A carrier's statement template, declared in its folder. Carriers seldom publish their statement's
 * columns: a template is the layout the product documents (docs/payouts.md) and its sandbox writes; a
 * real file that differs is read through a layout of the user's own in the configuration.
 */
export type StatementTemplate = z.output<typeof StatementColumnsSchema>;
