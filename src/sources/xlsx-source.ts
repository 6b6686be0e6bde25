import type { OrderCodeSource, SourceItem } from './order-code-source.js';
import { itemFromValues, requiredSourceColumns, type SourceColumns } from './source-rows.js';
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
  let columns: SourceColumns = { orderCode: 0, account: null, carrier: null };
  const rows = xlsxRows(file, { sheet }, (names) => (columns = requiredSourceColumns(file, names)));
  for await (const item of rows) {
    if (item.kind === 'rejected') yield item;
    else {
      const { values, origin } = item.row;
      yield itemFromValues(values, columns, origin);
    }
  }
}
