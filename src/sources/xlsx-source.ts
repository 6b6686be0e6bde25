import { type OrderCodeSource, SourceError, type SourceItem } from './order-code-source.js';
import { findSourceColumns, itemFromValues, listColumnNames, type SourceColumns } from './source-rows.js';
import { xlsxRows } from './workbook-rows.js';

/**
 * Order codes from a sheet of an `.xlsx` workbook (its first, or `sheet`): a header row with an
 * `order_code` (or `ordercode`) column and an optional `account` column, read as a stream. A row
 * whose code cell is empty, or with an error cell (`#N/A`), is a rejection naming it; reading goes on.
 */
export function xlsxSource(file: string, sheet?: string): OrderCodeSource {
  return {
    description: `xlsx:${file}${sheet === undefined ? '' : `#${sheet}`}`,
    items: () => readXlsx(file, sheet),
  };
}

async function* readXlsx(file: string, sheet: string | undefined): AsyncGenerator<SourceItem> {
  let columns: SourceColumns = { orderCode: 0, account: null };
  const rows = xlsxRows(file, { sheet }, (names) => {
    const found = findSourceColumns(names);
    if (found === null)
      throw new SourceError(`${file} has no order_code column; its columns are ${listColumnNames(names)}`);
    columns = found;
  });
  for await (const item of rows) {
    if (item.kind === 'rejected') yield item;
    else {
      const { values, origin } = item.row;
      yield itemFromValues(
        values[columns.orderCode],
        columns.account === null ? null : values[columns.account],
        origin,
      );
    }
  }
}
