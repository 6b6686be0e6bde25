import type { FeeType, StatementField } from '../carriers/statement-layout.js';
import { ProductError } from '../errors/product-error.js';
import { SourceError, type SourceRejection } from './order-code-source.js';
import { fitHeader, headerKey, type PayoutLayout, type StatementColumns } from './payout-layouts.js';
import { listColumnNames, type QueryRow, rejectionText } from './source-rows.js';
import { type TableSource, tableName, tableRows } from './table-rows.js';
import { readVndAmount } from './vnd-amount.js';

/** What a statement line is: a delivered order's COD, a debt deducted, a fee refunded, an adjustment. */
export const LINE_KINDS = ['cod', 'debt', 'refund', 'adjustment'] as const;
export type LineKind = (typeof LINE_KINDS)[number];

/** The words a statement may use for each kind, compared as headers are (any case, no diacritics). */
const LINE_KIND_WORDS: Readonly<Record<LineKind, readonly string[]>> = {
  cod: ['cod', 'thu hộ', 'tiền thu hộ', 'giao thành công'],
  debt: ['debt', 'công nợ', 'nợ', 'trừ nợ'],
  refund: ['refund', 'hoàn phí', 'hoàn tạm thu', 'đã hoàn'],
  adjustment: ['adjustment', 'điều chỉnh'],
};
const LINE_KIND_BY_WORD = new Map(
  Object.entries(LINE_KIND_WORDS).flatMap(([kind, words]) => words.map((word) => [headerKey(word), kind as LineKind])),
);

/** One line of a payout statement, its amounts whole VND. */
export interface StatementLine {
  /** `FILE:LINE`, a sheet's row for a workbook. */
  readonly origin: string;
  readonly batchId: string;
  /** `YYYY-MM-DD`. */
  readonly batchDate: string;
  readonly orderCode: string;
  readonly lineKind: LineKind;
  readonly codCollected: number;
  /** Each type's fees withheld, summed over its columns; a type with nothing withheld is left out. */
  readonly fees: ReadonlyMap<FeeType, number>;
  readonly debts: number;
  readonly netPaid: number;
  /** The batch's total as the statement states it, when it has the column and the cell a value. */
  readonly batchTotal: number | null;
}

/** Why a line was refused, as the rejects file's reject_code says it. */
export type LineRejectCode = 'UNREADABLE_ROW' | 'BAD_VALUE';

export type StatementItem =
  | { readonly kind: 'line'; readonly line: StatementLine }
  | {
      readonly kind: 'rejected';
      readonly code: LineRejectCode;
      readonly orderCode: string | null;
      readonly rejection: SourceRejection;
    };

/** A statement that cannot be read at all: the file is missing, no workbook, or its header does not fit its layout. */
export class StatementError extends ProductError {
  constructor(message: string, code: 'STATEMENT_UNREADABLE' | 'STATEMENT_HEADER_MISMATCH' = 'STATEMENT_UNREADABLE') {
    super(code, message);
  }
}

const ORDER_CODE = /^\S{1,64}$/;
const BATCH_ID = /^\S(.{0,62}\S)?$/;
const ISO_DAY = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const DAY_FIRST = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?: \d{1,2}:\d{2}(?::\d{2})?)?$/;

/** A batch date as statements write it (`2026-11-03`, `03/11/2026`, `3-11-2026`, with a time or not), as `YYYY-MM-DD`. */
export function readStatementDate(text: string): string | undefined {
  const trimmed = text.trim();
  const iso = ISO_DAY.exec(trimmed);
  const dayFirst = iso === null ? DAY_FIRST.exec(trimmed) : null;
  const [year, month, day] =
    iso !== null
      ? [Number(iso[1]), Number(iso[2]), Number(iso[3])]
      : dayFirst !== null
        ? [Number(dayFirst[3]), Number(dayFirst[2]), Number(dayFirst[1])]
        : [Number.NaN, Number.NaN, Number.NaN];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (Number.isNaN(date.getTime()) || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.toISOString().slice(0, 10);
}

function cellText(value: unknown): string {
  return value === null || value === undefined ? '' : String(value).trim();
}

/** Reads one row's values with the columns found; the problems of every cell, or the line. */
function lineOf(
  row: QueryRow,
  columns: StatementColumns,
  header: readonly string[],
): { line: StatementLine } | { problems: string[]; orderCode: string | null } {
  const problems: string[] = [];
  const text = (field: StatementField) => {
    const index = columns.fields[field];
    return index === undefined ? '' : cellText(row.values[index]);
  };
  const named = (index: number) => JSON.stringify(header[index] ?? '');
  const required = (field: StatementField, pattern: RegExp, what: string) => {
    const value = text(field);
    const index = columns.fields[field]!;
    if (value === '') problems.push(`column ${named(index)} is empty`);
    else if (!pattern.test(value)) problems.push(`column ${named(index)}: ${JSON.stringify(value)} is not ${what}`);
    return value;
  };
  const amountAt = (index: number, blank: number | null): number | null => {
    const value = cellText(row.values[index]);
    const reading = readVndAmount(value);
    if (reading === undefined) return blank;
    if (reading.ok) return reading.amount;
    problems.push(`column ${named(index)}: ${JSON.stringify(rejectionText(value))} is ${reading.reason}`);
    return blank;
  };
  const amount = (field: StatementField) => {
    const index = columns.fields[field];
    return index === undefined ? 0 : (amountAt(index, 0) ?? 0);
  };

  const batchId = required('batchId', BATCH_ID, 'a batch id');
  const orderCode = required('orderCode', ORDER_CODE, 'an order code');
  const dateText = text('batchDate');
  const batchDate = dateText === '' ? undefined : readStatementDate(dateText);
  if (dateText === '') problems.push(`column ${named(columns.fields.batchDate!)} is empty`);
  else if (batchDate === undefined)
    problems.push(
      `column ${named(columns.fields.batchDate!)}: ${JSON.stringify(rejectionText(dateText))} is not a date`,
    );
  const kindText = text('lineKind');
  const lineKind = kindText === '' ? 'cod' : LINE_KIND_BY_WORD.get(headerKey(kindText));
  if (lineKind === undefined)
    problems.push(
      `column ${named(columns.fields.lineKind!)}: ${JSON.stringify(rejectionText(kindText))} is not a kind of line (${Object.values(
        LINE_KIND_WORDS,
      )
        .map((words) => words[0])
        .join(', ')}, or their Vietnamese names)`,
    );
  const codCollected = amount('codCollected');
  const debts = amount('debts');
  const netPaid = amount('netPaid');
  const totalIndex = columns.fields.batchTotal;
  const batchTotal = totalIndex === undefined ? null : amountAt(totalIndex, null);
  const fees = new Map<FeeType, number>();
  for (const fee of columns.fees) {
    const withheld = amountAt(fee.index, 0) ?? 0;
    if (withheld !== 0) fees.set(fee.type, (fees.get(fee.type) ?? 0) + withheld);
  }
  for (const [type, sum] of fees) if (sum === 0) fees.delete(type);
  if (problems.length > 0 || batchDate === undefined || lineKind === undefined)
    return { problems, orderCode: orderCode === '' ? null : orderCode };
  return {
    line: {
      origin: row.origin,
      batchId,
      batchDate,
      orderCode,
      lineKind,
      codCollected,
      fees,
      debts,
      netPaid,
      batchTotal,
    },
  };
}

/**
 * The lines of a payout statement read with `layout`, streamed in the file's order. A header that does
 * not fit the layout refuses the file whole, in one line naming the columns it lacks; a row the file's
 * reader cannot read (a torn last line, a stray quote) or a value that is not what its column holds
 * (text in a money column, a day the calendar lacks) is a rejection naming the line and the column.
 */
export async function* statementLines(source: TableSource, layout: PayoutLayout): AsyncGenerator<StatementItem> {
  let columns: StatementColumns | undefined;
  let header: readonly string[] = [];
  const name = tableName(source);
  const check = (names: readonly string[]) => {
    const fit = fitHeader(layout, names);
    if (!fit.ok)
      throw new StatementError(
        `${name}: the header does not fit layout ${layout.name}: it lacks ${fit.missing.map((m) => JSON.stringify(m)).join(', ')}; its columns are ${listColumnNames(names)}`,
        'STATEMENT_HEADER_MISMATCH',
      );
    columns = fit.columns;
    header = names;
  };
  try {
    for await (const item of tableRows(source, check)) {
      if (item.kind === 'rejected') {
        yield { kind: 'rejected', code: 'UNREADABLE_ROW', orderCode: null, rejection: item.rejection };
        continue;
      }
      const read = lineOf(item.row, columns!, header);
      if ('line' in read) yield { kind: 'line', line: read.line };
      else
        yield {
          kind: 'rejected',
          code: 'BAD_VALUE',
          orderCode: read.orderCode,
          rejection: { origin: item.row.origin, reason: read.problems.join('; '), text: null },
        };
    }
  } catch (error) {
    if (error instanceof SourceError) throw new StatementError(error.message);
    throw error;
  }
}
