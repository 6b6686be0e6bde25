import { open } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { type CsvError, parse } from 'csv-parse';
import { type CsvDelimiter, peekHeaderLine, replayed } from './csv-header-line.js';
import { SourceError, type SourceRejection } from './order-code-source.js';
import { type QueryRow, rejectionText } from './source-rows.js';

export type CsvRowItem =
  | { readonly kind: 'row'; readonly row: QueryRow }
  | { readonly kind: 'rejected'; readonly rejection: SourceRejection };

const MAX_RECORD_BYTES = 65_536;

/**
 * The rows of a CSV file with a header, as named values: UTF-8 with or without a byte order mark, CRLF
 * or LF, `,` or `;` (from the header line, or `delimiter`), quoted fields. A row csv-parse cannot read,
 * or whose field count differs from the header's, is a rejection; reading goes on. `checkColumns`
 * sees the header's names (and may throw).
 */
export async function* csvRows(
  path: string,
  delimiter?: CsvDelimiter,
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<CsvRowItem> {
  let stream: Readable;
  try {
    stream = (await open(path, 'r')).createReadStream();
  } catch (error) {
    throw new SourceError(
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((error as Error).message.split('\n')[0] ?? '')}`,
    );
  }
  const chunks = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  try {
    const header = await peekHeaderLine(chunks, MAX_RECORD_BYTES, path);
    const parser = parse({
      delimiter: delimiter ?? header.delimiter,
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      info: true,
      max_record_size: MAX_RECORD_BYTES,
    });
    const skipped: SourceRejection[] = [];
    parser.on('skip', (error: CsvError) => {
      skipped.push({ origin: `${path}:${error.lines ?? '?'}`, reason: error.message, text: null });
    });
    // A read error reaches the loop below through the parser; the pipeline destroys both when it ends early.
    pipeline(Readable.from(replayed(header.readAhead, chunks)), parser, () => {});
    let columnNames: string[] | undefined;
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      for (const rejection of skipped.splice(0)) yield { kind: 'rejected', rejection };
      if (columnNames === undefined) {
        columnNames = record.map((name) => name.trim());
        checkColumns?.(columnNames);
        continue;
      }
      const origin = `${path}:${info.lines}`;
      if (record.every((field) => field.trim() === '')) continue;
      if (record.length !== columnNames.length) {
        yield {
          kind: 'rejected',
          rejection: {
            origin,
            reason: `the row has ${record.length} fields, the header ${columnNames.length}`,
            text: rejectionText(record.join(',')),
          },
        };
        continue;
      }
      yield { kind: 'row', row: { columnNames, values: record, origin, line: info.lines } };
    }
    for (const rejection of skipped) yield { kind: 'rejected', rejection };
    if (columnNames === undefined) throw new SourceError(`${path} is empty: no header line`);
  } finally {
    stream.destroy();
  }
}
