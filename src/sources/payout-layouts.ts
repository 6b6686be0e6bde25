import { z } from 'zod';

/** The carriers whose statements the product reads, as the warehouse's `carrier` column names them. */
export const PAYOUT_CARRIERS = ['247express', 'ghn'] as const;
export type PayoutCarrier = (typeof PAYOUT_CARRIERS)[number];

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

/** Fields a header may lack: a line without a kind is a COD line, a batch without a stated total has none. */
export const OPTIONAL_FIELDS: ReadonlySet<StatementField> = new Set(['lineKind', 'batchTotal']);

/** A column's header, or several it may be spelled as (the first found is read). */
const headerNames = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/**
 * A statement's columns: which header holds each value and which headers hold fees of which type.
 * Headers are matched in any case, with or without Vietnamese diacritics, blanks and punctuation.
 */
export const PayoutLayoutSchema = z
  .object({
    /** The carrier whose statements the layout reads, when `--carrier` names none. */
    carrier: z.enum(PAYOUT_CARRIERS).optional(),
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

export type PayoutLayoutConfig = z.output<typeof PayoutLayoutSchema>;

/** A layout's name in the configuration: the templates' names are taken. */
export const layoutName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/, 'lower-case letters, digits, _ and -');

/** A layout ready to read a header: each field's header names, and each fee column with its type. */
export interface PayoutLayout {
  readonly name: string;
  readonly carrier: PayoutCarrier | undefined;
  readonly fields: Readonly<Partial<Record<StatementField, readonly string[]>>>;
  readonly fees: readonly { readonly header: string; readonly type: FeeType }[];
}

/**
 * The product's own statement templates. Neither carrier publishes its statement's columns: these are
 * the layouts the product documents (docs/payouts.md) and its sandbox writes; a real file that differs
 * is read through a layout of the user's own in the configuration.
 */
export const TEMPLATE_LAYOUTS: Readonly<Record<PayoutCarrier, PayoutLayoutConfig>> = {
  '247express': {
    carrier: '247express',
    columns: {
      batchId: ['Mã phiên', 'Mã bảng kê', 'batch_id'],
      batchDate: ['Ngày thanh toán', 'Ngày chuyển tiền', 'batch_date'],
      orderCode: ['Mã vận đơn', 'Mã đơn hàng', 'order_code'],
      lineKind: ['Loại dòng', 'line_kind'],
      codCollected: ['Tiền thu hộ', 'Tiền COD', 'cod_collected'],
      debts: ['Công nợ trừ', 'Công nợ', 'debts'],
      netPaid: ['Thực trả', 'Thực nhận', 'net_paid'],
      batchTotal: ['Tổng phiên', 'batch_total'],
    },
    fees: {
      'Cước chính': 'shipping',
      'Phí vùng xa': 'remote_area',
      'Phụ phí xăng dầu': 'fuel',
      VAT: 'vat',
      'Phí thu hộ': 'cod',
    },
  },
  ghn: {
    carrier: 'ghn',
    columns: {
      batchId: ['Mã phiên COD', 'Mã phiên', 'batch_id'],
      batchDate: ['Ngày chuyển COD', 'Ngày chuyển tiền', 'batch_date'],
      orderCode: ['Mã đơn GHN', 'Mã đơn hàng', 'order_code'],
      lineKind: ['Loại giao dịch', 'line_kind'],
      codCollected: ['Tiền thu hộ', 'cod_collected'],
      debts: ['Công nợ', 'debts'],
      netPaid: ['Thực nhận', 'net_paid'],
      batchTotal: ['Tổng tiền phiên', 'batch_total'],
    },
    fees: {
      'Phí dịch vụ': 'shipping',
      'Phí khai giá': 'insurance',
      'Phí thu hộ': 'cod',
      'Phí hoàn hàng': 'return',
      'Phí giao lại': 'redelivery',
    },
  },
};

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
