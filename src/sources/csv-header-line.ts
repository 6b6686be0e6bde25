import { SourceError } from './order-code-source.js';

export type CsvDelimiter = ',' | ';';

/** What is known from the header line before csv-parse starts, and the bytes read to learn it. */
export interface HeaderLinePeek {
  readonly delimiter: CsvDelimiter;
  /** The bytes read so far, without a byte order mark, to be parsed from the start. */
  readonly readAhead: Buffer;
}

const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);
const QUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const LF = 0x0a;
const CR = 0x0d;
/** Bytes of a blank line, skipped before the header. */
const BLANK_BYTES = new Set([LF, CR, 0x20, 0x09]);

/**
 * Reads chunks until the first non-blank line is complete, to learn its delimiter (`;` when it has more
 * semicolons than commas outside quotes, else `,`) and to refuse a header over `maxLineBytes`, which
 * the over-long line guard must never replace. A byte order mark is dropped here: csv-parse would
 * switch to decoding UTF-8 on meeting one, and the source needs bytes.
 */
export async function peekHeaderLine(
  chunks: AsyncIterator<Buffer>,
  maxLineBytes: number,
  inputName: string,
): Promise<HeaderLinePeek> {
  const read: Buffer[] = [];
  for (;;) {
    const next = await chunks.next();
    if (!next.done) read.push(next.value);
    // The mark is whole by the time the line is: its bytes are not line breaks.
    const bytes = withoutByteOrderMark(Buffer.concat(read));
    const line = scanFirstLine(bytes);
    if (line.length > maxLineBytes)
      throw new SourceError(`${inputName}: the header line is over ${maxLineBytes} bytes`);
    if (line.complete || next.done) return { delimiter: line.semicolons > line.commas ? ';' : ',', readAhead: bytes };
  }
}

function withoutByteOrderMark(bytes: Buffer): Buffer {
  return bytes.subarray(0, BYTE_ORDER_MARK.length).equals(BYTE_ORDER_MARK)
    ? bytes.subarray(BYTE_ORDER_MARK.length)
    : bytes;
}

interface FirstLineScan {
  readonly complete: boolean;
  readonly length: number;
  readonly commas: number;
  readonly semicolons: number;
}

/**
 * Counts the candidate delimiters of the first non-blank line outside quoted fields. A quote opens a
 * field only at its start, as csv-parse reads it; a doubled quote inside a quoted field is a quote.
 */
function scanFirstLine(bytes: Buffer): FirstLineScan {
  let start = 0;
  while (start < bytes.length && BLANK_BYTES.has(bytes[start] ?? 0)) start++;
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  let fieldStart = true;
  for (let i = start; i < bytes.length; i++) {
    const byte = bytes[i];
    if (quoted) {
      if (byte === QUOTE) {
        if (bytes[i + 1] === QUOTE) i++;
        else quoted = false;
      }
      continue;
    }
    if (byte === LF || byte === CR) return { complete: true, length: i - start, commas, semicolons };
    if (byte === COMMA) commas++;
    if (byte === SEMICOLON) semicolons++;
    if (byte === QUOTE && fieldStart) quoted = true;
    fieldStart = byte === COMMA || byte === SEMICOLON;
  }
  return { complete: false, length: bytes.length - start, commas, semicolons };
}

/** The bytes read ahead by peekHeaderLine, then the rest of the input. */
export async function* replayed(readAhead: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield readAhead;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}
