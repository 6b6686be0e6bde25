import { z } from 'zod';
import { KNOWN_CARRIERS } from '../carriers/known-carriers.js';
import {
  type FeeType,
  STATEMENT_FIELDS,
  StatementColumnsSchema,
  type StatementField,
} from '../carriers/statement-layout.js';

/** The carriers whose statements the product reads: those whose definition holds a statement template. */
export const PAYOUT_CARRIERS: readonly string[] = KNOWN_CARRIERS.filter(
  (carrier) => carrier.statementTemplate !== undefined,
).map((carrier) => carrier.id);

/** A carrier whose statements the product reads, as the warehouse's `carrier` column names it. */
export const payoutCarrierId = z.string().refine((id) => PAYOUT_CARRIERS.includes(id), {
  error: (issue) =>
    `${JSON.stringify(issue.input)} is not a carrier whose statements the product reads: give ${PAYOUT_CARRIERS.join(' or ')}`,
});

/** Fields a header may lack: a line without a kind is a COD line, a batch without a stated total has none. */
const OPTIONAL_FIELDS: ReadonlySet<StatementField> = new Set(['lineKind', 'batchTotal']);

/** A layout of the configuration: a statement's columns, and the carrier it reads when `--carrier` names none. */
export const PayoutLayoutSchema = StatementColumnsSchema.extend({ carrier: payoutCarrierId.optional() }).strict();

export type PayoutLayoutConfig = z.output<typeof PayoutLayoutSchema>;

/** A layout's name in the configuration: the templates' names are taken. */
export const layoutName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/, 'lower-case letters, digits, _ and -');

/** A layout ready to read a header: each field's header names, and each fee column with its type. */
export interface PayoutLayout {
  readonly name: string;
  readonly carrier: string | undefined;
  readonly fields: Readonly<Partial<Record<StatementField, readonly string[]>>>;
  readonly fees: readonly { readonly header: string; readonly type: FeeType }[];
}

/** Each carrier's statement template by its id, as a layout of the configuration would give it. */
export const TEMPLATE_LAYOUTS: ReadonlyMap<string, PayoutLayoutConfig> = new Map(
  KNOWN_CARRIERS.flatMap((carrier) =>
    carrier.statementTemplate === undefined
      ? []
      : [[carrier.id, { carrier: carrier.id, ...carrier.statementTemplate }]],
  ),
);

/** A layout of the configuration, or a template, as a header is read with it. */
export function payoutLayout(name: string, config: PayoutLayoutConfig): PayoutLayout {
  const fields: Partial<Record<StatementField, readonly string[]>> = {};
  for (const field of STATEMENT_FIELDS) {
    const names = config.columns[field];
    if (names !== undefined) fields[field] = typeof names === 'string' ? [names] : names;
  }
  return {
    name,
    carrier: config.carrier,
    fields,
    fees: Object.entries(config.fees).map(([header, type]) => ({ header, type })),
  };
}

/**
 * A header as compared: without diacritics (`đ` as `d`), in lower case, every run of blanks and
 * punctuation one space: `Tiền thu hộ`, `TIEN THU HO` and `tien_thu_ho` are one header.
 */
export function headerKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[đĐ]/g, 'd')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Where each of a layout's values is among a header's columns (indexes), and each fee column. */
export interface StatementColumns {
  readonly fields: Readonly<Partial<Record<StatementField, number>>>;
  readonly fees: readonly { readonly index: number; readonly header: string; readonly type: FeeType }[];
}

/** What a header lacks of a layout: the names it would have (the first spelling of each), in the layout's order. */
export type HeaderFit =
  | { readonly ok: true; readonly columns: StatementColumns }
  | { readonly ok: false; readonly missing: readonly string[] };

/** Finds a layout's columns in a header; the first of duplicate headers is read. */
export function fitHeader(layout: PayoutLayout, header: readonly string[]): HeaderFit {
  const positions = new Map<string, number>();
  header.forEach((name, index) => {
    const key = headerKey(name);
    if (key !== '' && !positions.has(key)) positions.set(key, index);
  });
  const find = (names: readonly string[]) =>
    names.map((name) => positions.get(headerKey(name))).find((index) => index !== undefined);
  const fields: Partial<Record<StatementField, number>> = {};
  const missing: string[] = [];
  for (const field of STATEMENT_FIELDS) {
    const names = layout.fields[field];
    if (names === undefined) continue;
    const index = find(names);
    if (index !== undefined) fields[field] = index;
    else if (!OPTIONAL_FIELDS.has(field)) missing.push(names[0]!);
  }
  const fees: { index: number; header: string; type: FeeType }[] = [];
  for (const fee of layout.fees) {
    const index = find([fee.header]);
    if (index === undefined) missing.push(fee.header);
    else fees.push({ index, header: header[index]!, type: fee.type });
  }
  return missing.length > 0 ? { ok: false, missing } : { ok: true, columns: { fields, fees } };
}
