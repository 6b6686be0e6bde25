import { UserError } from '../errors/user-error.js';
import type { SourceRejection } from './order-code-source.js';
import { headerKey } from './payout-layouts.js';
import { readStatementDate } from './payout-statement-lines.js';
import { listColumnNames, rejectionText } from './source-rows.js';
import { type TableSource, tableName, tableRows } from './table-rows.js';
import { readVndAmount } from './vnd-amount.js';

/** A deposit the carrier made to the shop's bank account: its day, whole VND, and the bank's reference text. */
export interface BankDeposit {
  readonly day: string;
  readonly amount: number;
  readonly reference: string;
  readonly origin: string;
}

export type BankDepositItem =
  | { readonly kind: 'deposit'; readonly deposit: BankDeposit }
  | { readonly kind: 'rejected'; readonly rejection: SourceRejection };

/** The columns of a deposit, each with the headers a bank's export may give it (matched as statement headers are). */
const DEPOSIT_COLUMNS = {
  day: ['Ngày giao dịch', 'Ngày', 'date'],
  amount: ['Số tiền ghi có', 'Ghi có', 'Số tiền', 'amount'],
  reference: ['Nội dung', 'Diễn giải', 'Mã tham chiếu', 'reference'],
} as const;

type DepositColumn = keyof typeof DEPOSIT_COLUMNS;

function cellText(value: unknown): string {
  return value === null || value === undefined ? '' : String(value).trim();
}

/**
 * The deposits of a bank's export (CSV or a workbook's sheet) with a date, an amount and a reference
 * column: a header without one refuses the file whole, in one line; a row whose day or amount cannot
 * be read, or whose amount is not above zero, is a rejection naming its line and column.
 */
export async function* bankDepositRows(source: TableSource): AsyncGenerator<BankDepositItem> {
  const name = tableName(source);
  let at: Record<DepositColumn, number> | undefined;
  let header: readonly string[] = [];
  const check = (names: readonly string[]) => {
    const keys = names.map(headerKey);
    const found = Object.fromEntries(
      Object.entries(DEPOSIT_COLUMNS).map(([column, spellings]) => [
        column,
        spellings.map((s) => keys.indexOf(headerKey(s))).find((index) => index >= 0) ?? -1,
      ]),
    ) as Record<DepositColumn, number>;
    const missing = (Object.keys(DEPOSIT_COLUMNS) as DepositColumn[]).filter((c) => found[c] < 0);
    if (missing.length > 0)
      throw new UserError(
        `${name}: not bank deposits: it lacks ${missing.map((c) => JSON.stringify(DEPOSIT_COLUMNS[c][0])).join(', ')}; its columns are ${listColumnNames(names)}`,
      );
    at = found;
    header = names;
  };
  for await (const item of tableRows(source, check)) {
    if (item.kind === 'rejected') {
      yield item;
      continue;
    }
    const { values, origin } = item.row;
    const columns = at!;
    const named = (column: DepositColumn) => JSON.stringify(header[columns[column]] ?? '');
    const problems: string[] = [];
    const dayText = cellText(values[columns.day]);
    const day = readStatementDate(dayText);
    if (day === undefined)
      problems.push(`column ${named('day')}: ${JSON.stringify(rejectionText(dayText))} is not a date`);
    const amountText = cellText(values[columns.amount]);
    const reading = readVndAmount(amountText);
    if (reading === undefined || (reading.ok && reading.amount <= 0))
      problems.push(`column ${named('amount')}: ${JSON.stringify(rejectionText(amountText))} is not a deposit above 0`);
    else if (!reading.ok)
      problems.push(`column ${named('amount')}: ${JSON.stringify(rejectionText(amountText))} is ${reading.reason}`);
    if (problems.length > 0 || day === undefined || reading === undefined || !reading.ok) {
      yield { kind: 'rejected', rejection: { origin, reason: problems.join('; '), text: null } };
      continue;
    }
    yield {
      kind: 'deposit',
      deposit: { day, amount: reading.amount, reference: cellText(values[columns.reference]), origin },
    };
  }
}
