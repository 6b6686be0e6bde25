import { isUtf8 } from 'node:buffer';
import type { CsvError } from 'csv-parse';
import { SourceError, type SourceItem } from './order-code-source.js';
import type { OverlongLineGuard } from './overlong-line-guard.js';
import { findSourceColumns, listColumnNames, rejectionText, type SourceColumns } from './source-rows.js';

/** A record as csv-parse gives it with `raw: true`: fields and raw text, both decoded as latin1. */
export interface RawCsvRecord {
  readonly record: string[];
  readonly raw: string;
}

interface CsvHeader {
  readonly columns: SourceColumns;
  readonly fieldCount: number;
}

const LF = 0x0a;
const CR = 0x0d;
const NON_ASCII = /[^\p{ASCII}]/u;

/**
 * Turns csv-parse's records, in order, into source items: the first is the header, blank rows are
 * skipped, broken rows become rejections.
 *
 * Bytes arrive as latin1 text, one character per byte, so that invalid UTF-8 survives to be detected
 * here and lengths are byte counts. Line numbers are counted here from each record's raw text, which
 * includes the blank lines skipped before it: csv-parse's own count runs one ahead after every CRLF
 * inside a quoted field.
 */
export class CsvRecordReader {
  private nextLine = 1;
  private header: CsvHeader | null = null;

  constructor(
    private readonly inputName: string,
    private readonly maxRecordBytes: number,
    private readonly guard: OverlongLineGuard,
  ) {}

  /** The item for a parsed record, or null for the header and blank rows. */
  read({ record, raw }: RawCsvRecord): SourceItem | null {
    const { line, content } = this.locate(raw);
    if (this.header === null) {
      this.header = this.readHeader(record, line, content);
      return null;
    }
    const overlong = this.guard.claim(content);
    if (overlong !== null) return this.rejected(line, `record over ${this.maxRecordBytes} bytes`, overlong);
    if (content.length > this.maxRecordBytes)
      return this.rejected(line, `record over ${this.maxRecordBytes} bytes`, decodedText(content));
    if (isBlank(record)) return null;
    const ascii = !NON_ASCII.test(content);
    if (!ascii && !isUtf8(Buffer.from(content, 'latin1')))
      return this.rejected(line, 'not valid UTF-8', decodedText(content));
    const fields = ascii ? record : record.map(fromLatin1);
    const { columns, fieldCount } = this.header;
    if (fields.length !== fieldCount) {
      const counted = fields.length === 1 ? '1 field' : `${fields.length} fields`;
      return this.rejected(line, `the row has ${counted}, the header ${fieldCount}`, decodedText(content));
    }
    const orderCode = fields[columns.orderCode]?.trim() ?? '';
    if (orderCode === '') return this.rejected(line, 'no order_code in this row', decodedText(content));
    const optional = (column: number) => {
      const text = fields[column]?.trim() ?? '';
      return text === '' ? null : text;
    };
    const account = columns.account === null ? null : optional(columns.account);
    const carrier = columns.carrier === null ? {} : { carrier: optional(columns.carrier) };
    return { kind: 'code', code: { orderCode, account, ...carrier, origin: this.origin(line) } };
  }

  /** The item for a record csv-parse skipped with an error. */
  readSkipped(error: CsvError, raw: string): SourceItem {
    const { line, content } = this.locate(raw);
    if (error.code === 'CSV_MAX_RECORD_SIZE') {
      // csv-parse reads nothing after this error, so the source cannot go on.
      throw new SourceError(
        `${this.origin(line)}: a record runs on far past ${this.maxRecordBytes} bytes (an unclosed quote?); the rest of the input cannot be read`,
      );
    }
    const reason =
      error.code === 'CSV_QUOTE_NOT_CLOSED' ? 'unclosed quote: the record runs to the end of the input' : error.message;
    if (this.header === null) throw new SourceError(`${this.origin(line)}: cannot read the header line: ${reason}`);
    return this.rejected(line, reason, decodedText(content));
  }

  /** Checks, once every record is read, that there was a header. */
  finish(): void {
    if (this.header === null) throw new SourceError(`${this.inputName} is empty: no header line`);
  }

  /** The header's columns, or null for a blank row before it. */
  private readHeader(record: string[], line: number, content: string): CsvHeader | null {
    if (isBlank(record)) return null;
    if (content.length > this.maxRecordBytes)
      throw new SourceError(`${this.origin(line)}: the header is over ${this.maxRecordBytes} bytes`);
    if (!isUtf8(Buffer.from(content, 'latin1')))
      throw new SourceError(`${this.origin(line)}: the header line is not valid UTF-8`);
    const names = record.map(fromLatin1);
    const columns = findSourceColumns(names);
    if (columns === null)
      throw new SourceError(`${this.inputName}: no order_code column; the columns are ${listColumnNames(names)}`);
    return { columns, fieldCount: names.length };
  }

  /** The line a record starts on, and its text without the blank lines before it and its line break. */
  private locate(raw: string): { line: number; content: string } {
    let start = 0;
    while (start < raw.length && isLineBreak(raw.charCodeAt(start))) start++;
    let end = raw.length;
    while (end > start && isLineBreak(raw.charCodeAt(end - 1))) end--;
    const line = this.nextLine + countLineBreaks(raw, 0, start);
    this.nextLine += countLineBreaks(raw, 0, raw.length);
    return { line, content: raw.slice(start, end) };
  }

  private origin(line: number): string {
    return `${this.inputName}:${line}`;
  }

  private rejected(line: number, reason: string, text: string): SourceItem {
    return { kind: 'rejected', rejection: { origin: this.origin(line), reason, text } };
  }
}

function isBlank(record: string[]): boolean {
  return record.every((field) => field.trim() === '');
}

function isLineBreak(code: number): boolean {
  return code === LF || code === CR;
}

/** LF, CRLF and a lone CR each end a line. */
function countLineBreaks(text: string, from: number, to: number): number {
  let breaks = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code === LF || (code === CR && text.charCodeAt(i + 1) !== LF)) breaks++;
  }
  return breaks;
}

function fromLatin1(text: string): string {
  return Buffer.from(text, 'latin1').toString('utf8');
}

/** Raw latin1 text shown as UTF-8, invalid bytes as U+FFFD, cut for a rejection. */
function decodedText(content: string): string {
  return rejectionText(NON_ASCII.test(content) ? fromLatin1(content) : content);
}
