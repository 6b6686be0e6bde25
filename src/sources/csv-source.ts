import { open } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { type CsvError, parse } from 'csv-parse';
import { type CsvDelimiter, peekHeaderLine, replayed } from './csv-header-line.js';
import { CsvRecordReader, type RawCsvRecord } from './csv-records.js';
import { type OrderCodeSource, SourceError, type SourceItem } from './order-code-source.js';
import { OverlongLineGuard } from './overlong-line-guard.js';

export interface CsvSourceOptions {
  /** The field delimiter; when not given, the one the header line uses more of. */
  readonly delimiter?: CsvDelimiter;
  /** Read instead of the process's standard input when the input is `-`. */
  readonly stdin?: NodeJS.ReadableStream;
  /** The longest record accepted, in bytes (default 65536); a longer one is rejected and reading goes on. */
  readonly maxRecordBytes?: number;
}

const DEFAULT_MAX_RECORD_BYTES = 65_536;
/**
 * csv-parse's own limit, as a multiple of ours. A record between the two is rejected on its own; one
 * past csv-parse's limit is taken for an unclosed quote swallowing the input, and ends the source.
 */
const RUNAWAY_RECORD_FACTOR = 16;

/** A record csv-parse skipped with an error, and how many records it had passed on before. */
interface SkippedRecord {
  readonly afterRecords: number;
  readonly error: CsvError;
  readonly raw: string;
}

/**
 * Order codes from a CSV file, or standard input for `-`: a header row with an `order_code` (or
 * `ordercode`) column and an optional `account` column, any case, other columns ignored. Read as a
 * stream, one record in memory at a time.
 */
export function csvSource(input: string, options: CsvSourceOptions = {}): OrderCodeSource {
  const inputName = input === '-' ? 'stdin' : input;
  return {
    description: `csv:${inputName}`,
    items: () => readCsv(input, inputName, options),
  };
}

async function* readCsv(input: string, inputName: string, options: CsvSourceOptions): AsyncGenerator<SourceItem> {
  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const stream = input === '-' ? (options.stdin ?? process.stdin) : await openFile(input);
  const chunks = bytesOf(stream, inputName)[Symbol.asyncIterator]();
  try {
    const header = await peekHeaderLine(chunks, maxRecordBytes, inputName);
    const guard = new OverlongLineGuard(maxRecordBytes);
    const parser = parse({
      delimiter: options.delimiter ?? header.delimiter,
      record_delimiter: ['\r\n', '\n', '\r'],
      // One character per byte: invalid UTF-8 reaches the reader intact, and sizes are byte counts.
      encoding: 'latin1',
      raw: true,
      // A stray quote inside a field is kept as a character; the order code checks catch it later.
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      max_record_size: maxRecordBytes * RUNAWAY_RECORD_FACTOR,
    });
    const skipped: SkippedRecord[] = [];
    parser.on('skip', (error: CsvError, raw: string | undefined) => {
      skipped.push({ afterRecords: parser.info.records, error, raw: raw ?? '' });
    });
    // A read error reaches the loop below through the parser, which the pipeline destroys with it.
    pipeline(Readable.from(guard.guard(replayed(header.readAhead, chunks))), parser, () => {});

    const reader = new CsvRecordReader(inputName, maxRecordBytes, guard);
    let recordIndex = 0;
    try {
      for await (const record of parser as AsyncIterable<RawCsvRecord>) {
        // A skip comes in order: after the records parsed before it.
        for (let skip = skipped[0]; skip !== undefined && skip.afterRecords <= recordIndex; skip = skipped[0]) {
          skipped.shift();
          yield reader.readSkipped(skip.error, skip.raw);
        }
        const item = reader.read(record);
        if (item !== null) yield item;
        recordIndex++;
      }
      for (const skip of skipped) yield reader.readSkipped(skip.error, skip.raw);
      reader.finish();
    } finally {
      parser.destroy();
    }
  } finally {
    // Ends a read still waiting for data, and with it the generators and the pipeline above.
    if (stream instanceof Readable) stream.destroy();
  }
}

async function openFile(path: string): Promise<Readable> {
  try {
    const file = await open(path, 'r');
    return file.createReadStream();
  } catch (error) {
    throw new SourceError(`cannot read ${path}: ${readProblem(error)}`);
  }
}

/** The input's bytes; a failure to read them is a SourceError. */
async function* bytesOf(stream: NodeJS.ReadableStream, inputName: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  } catch (error) {
    throw new SourceError(`cannot read ${inputName}: ${readProblem(error)}`);
  }
}

function readProblem(error: unknown): string {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  }
}
