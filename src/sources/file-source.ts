import type { CsvDelimiter } from './csv-header-line.js';
import { csvSource } from './csv-source.js';
import type { OrderCodeSource } from './order-code-source.js';
import { isWorkbook } from './table-rows.js';
import { xlsxSource } from './xlsx-source.js';

/** Order codes from a file: a workbook's first sheet when its name ends in `.xlsx`, else a CSV (`-`: stdin). */
export function fileSource(input: string, delimiter?: CsvDelimiter): OrderCodeSource {
  return isWorkbook(input) ? xlsxSource(input) : csvSource(input, { delimiter });
}
