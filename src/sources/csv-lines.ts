import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { Parser } from 'csv-parse';
import type { CsvRowItem } from './csv-rows.js';
import { maskedOneLineMessage } from './masked-message.js';
import { SourceError } from './order-code-source.js';

/**
 * csv-parse's stream, each record pushed with the line it ends on (from the parser's own `info`, as
 * it stands when the record is pushed): the same line number as the `info` option gives, without the
 * two objects that option builds per record, which cost more than parsing the record.
 */
class LineNumberedParser extends Parser {
  override push(record: unknown): boolean {
    return super.push(record === null ? null : { record, line: this.info.lines });
  }
}

/**
 * The rows of a CSV file read leniently, as a partner's export comes: either delimiter (`,` or `;`)
 * anywhere, rows of any length (a short one lacks its last values), UTF-8 with or without BOM. The
 * first record is the header, which `checkColumns` sees (and may throw); each later record a row,
 * `FILE:LINE` its origin (the line it ends on). A missing file or a record csv-parse cannot read
 * is a SourceError that starts with the file's name.
 */
export async function* lenientCsvRows(
  file: string,
  checkColumns: (names: readonly string[]) => void,
): AsyncGenerator<CsvRowItem> {
  try {
    await access(file);
  } catch {
    throw new SourceError(`${file}: no such file`);
  }
  const parser = createReadStream(file).pipe(
    new LineNumberedParser({ bom: true, delimiter: [',', ';'], relax_column_count: true, skip_empty_lines: true }),
  );
  let columnNames: readonly string[] | undefined;
  try {
    for await (const { record, line } of parser as AsyncIterable<{ record: string[]; line: number }>) {
      if (columnNames === undefined) {
        checkColumns(record);
        columnNames = record;
        continue;
      }
      yield { kind: 'row', row: { columnNames, values: record, origin: `${file}:${line}`, line } };
    }
  } catch (error) {
    if (error instanceof SourceError) throw error;
    throw new SourceError(`${file}: ${maskedOneLineMessage(error, [])}`);
  }
}
