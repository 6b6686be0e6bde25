import { z } from 'zod';
import type { PriceQuoteRequest } from '../carriers/carrier-price-quotes.js';
import { SourceError } from './order-code-source.js';
import { listColumnNames } from './source-rows.js';

/**
 * The request's fields, each with the name of its column in a source as the docs and messages give it
 * (snake_case and camelCase are read too).
 */
const REQUEST_COLUMNS = {
  toProvinceName: 'ToProvinceName',
  toDistrictName: 'ToDistrictName',
  toWardName: 'ToWardName',
  length: 'Length',
  width: 'Width',
  height: 'Height',
  realWeight: 'RealWeight',
  clientHubId: 'ClientHubID',
  serviceTypeId: 'ServiceTypeID',
} as const satisfies Record<keyof PriceQuoteRequest, string>;

export type PriceRequestField = keyof typeof REQUEST_COLUMNS;
/** The fields of a quote row: the request's, and the optional order_code and account. */
export type PriceRowField = PriceRequestField | 'order_code' | 'account';

export const PRICE_REQUEST_FIELDS = Object.keys(REQUEST_COLUMNS) as PriceRequestField[];

/** A field's column as the docs and messages name it. */
function columnOf(field: PriceRowField): string {
  return field === 'order_code' || field === 'account' ? field : REQUEST_COLUMNS[field];
}

/** A column name as compared: lower case, without `_`, `-` or blanks (`ToProvinceName`, `to_province_name`). */
function columnKey(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]/g, '');
}

const FIELD_BY_KEY = new Map<string, PriceRowField>([
  ...PRICE_REQUEST_FIELDS.map((field) => [columnKey(REQUEST_COLUMNS[field]), field] as const),
  ['ordercode', 'order_code'],
  ['account', 'account'],
]);

/** Where each known field is among a source's columns (the first of duplicates wins). */
export type PriceColumns = Partial<Record<PriceRowField, number>>;

/**
 * Finds the quote fields among column names, in any case, PascalCase or snake_case. Throws a
 * SourceError naming the required fields that are missing; `optional` fields may be absent.
 */
export function findPriceColumns(
  names: readonly string[],
  required: readonly PriceRowField[],
  sourceName: string,
): PriceColumns {
  const columns: PriceColumns = {};
  names.forEach((name, index) => {
    const field = FIELD_BY_KEY.get(columnKey(name));
    if (field !== undefined && columns[field] === undefined) columns[field] = index;
  });
  const missing = required.filter((field) => columns[field] === undefined);
  if (missing.length > 0)
    throw new SourceError(
      `${sourceName}: no ${missing.map(columnOf).join(', ')} column; the columns are ${listColumnNames(names)}`,
    );
  return columns;
}

/** The named fields of one row, as text (trimmed) or as the database gave them. */
export function fieldsOf(columns: PriceColumns, values: readonly unknown[]): Partial<Record<PriceRowField, unknown>> {
  const fields: Partial<Record<PriceRowField, unknown>> = {};
  for (const [field, index] of Object.entries(columns) as [PriceRowField, number][]) fields[field] = values[index];
  return fields;
}

const text = (field: string) =>
  z.preprocess(
    (value) => (value === null || value === undefined ? '' : String(value).trim()),
    z.string().min(1, `${field} is empty`),
  );

/** A number from a JSON number, a database numeric (bigint, DECIMAL value) or its text; blank is missing. */
const measure = (field: string, positive: boolean) =>
  z.preprocess(
    (value) => {
      if (value === null || value === undefined) return undefined;
      if (typeof value === 'number') return value;
      const spelled = String(value).trim();
      return spelled === '' ? undefined : Number(spelled);
    },
    z
      .number({ error: (issue) => (issue.input === undefined ? `${field} is empty` : `${field} is not a number`) })
      .refine(Number.isFinite, `${field} is not a number`)
      .refine(
        (n) => (positive ? n > 0 : n >= 0),
        positive ? `${field} must be greater than 0` : `${field} must not be negative`,
      ),
  );

const PriceRowSchema = z.object({
  toProvinceName: text(REQUEST_COLUMNS.toProvinceName),
  toDistrictName: text(REQUEST_COLUMNS.toDistrictName),
  toWardName: text(REQUEST_COLUMNS.toWardName),
  length: measure(REQUEST_COLUMNS.length, false),
  width: measure(REQUEST_COLUMNS.width, false),
  height: measure(REQUEST_COLUMNS.height, false),
  realWeight: measure(REQUEST_COLUMNS.realWeight, true),
  clientHubId: text(REQUEST_COLUMNS.clientHubId),
  serviceTypeId: text(REQUEST_COLUMNS.serviceTypeId),
}) satisfies z.ZodType<PriceQuoteRequest>;

export type PriceRowCheck =
  | {
      readonly ok: true;
      readonly request: PriceQuoteRequest;
      readonly orderCode: string | null;
      readonly account: string | null;
    }
  | { readonly ok: false; readonly reason: string };

function optionalText(value: unknown): string | null {
  const spelled = value === null || value === undefined ? '' : String(value).trim();
  return spelled === '' ? null : spelled;
}

/**
 * Checks one row's fields as a quote request; a row that is not one is refused with every reason
 * (`Length is not a number; ClientHubID is empty`, as the docs name the columns), and is never sent. `defaultClientHubId` fills a
 * missing ClientHubID.
 */
export function checkPriceRow(
  fields: Partial<Record<PriceRowField, unknown>>,
  defaultClientHubId?: string,
): PriceRowCheck {
  const withHub =
    optionalText(fields.clientHubId) === null && defaultClientHubId !== undefined
      ? { ...fields, clientHubId: defaultClientHubId }
      : fields;
  const checked = PriceRowSchema.safeParse(withHub);
  if (!checked.success) return { ok: false, reason: checked.error.issues.map((issue) => issue.message).join('; ') };
  return {
    ok: true,
    request: checked.data,
    orderCode: optionalText(fields.order_code),
    account: optionalText(fields.account),
  };
}
